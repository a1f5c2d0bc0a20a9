/// Server-sent events (the text/event-stream format) from bytes as they arrive: `data:` lines
/// joined with "\n" make one event's data, a blank line ends the event, `id:` is remembered for a
/// reconnect's Last-Event-ID, comments (`:`) are keep-alives. An event larger than `maxEventBytes`
/// is dropped and counted.
struct SSEParser {
    struct Event: Equatable { let name: String; let data: String }

    let maxEventBytes: Int
    private(set) var lastEventId: String?
    private(set) var dropped = 0
    private var pending: [UInt8] = []
    private var scanned = 0
    private var data: [UInt8] = []
    private var hasData = false
    private var name = ""
    private var oversized = false

    init(maxEventBytes: Int) { self.maxEventBytes = maxEventBytes }

    mutating func feed(_ bytes: [UInt8]) -> [Event] {
        pending += bytes
        var events: [Event] = []
        var start = 0
        var i = scanned
        while i < pending.count {
            if pending[i] == 10 {
                var end = i
                if end > start, pending[end - 1] == 13 { end -= 1 }
                if let e = line(pending[start..<end]) { events.append(e) }
                start = i + 1
            }
            i += 1
        }
        pending.removeFirst(start)
        scanned = pending.count
        if pending.count > maxEventBytes { pending.removeAll(); oversized = true }
        return events
    }

    private mutating func line(_ l: ArraySlice<UInt8>) -> Event? {
        if l.isEmpty {
            defer { data.removeAll(keepingCapacity: true); hasData = false; name = ""; oversized = false }
            if oversized { dropped += 1; return nil }
            guard hasData else { return nil }
            return Event(name: name.isEmpty ? "message" : name, data: String(decoding: data, as: UTF8.self))
        }
        if l.first == 58 { return nil }  // ":" comment
        let colon = l.firstIndex(of: 58) ?? l.endIndex
        let field = String(decoding: l[l.startIndex..<colon], as: UTF8.self)
        var value = colon < l.endIndex ? l[(colon + 1)...] : []
        if value.first == 32 { value = value.dropFirst() }
        switch field {
        case "data":
            if hasData { data.append(10) }
            data += value
            hasData = true
            if data.count > maxEventBytes { oversized = true; data.removeAll() }
        case "event": name = String(decoding: value, as: UTF8.self)
        case "id": lastEventId = String(decoding: value, as: UTF8.self)
        default: break
        }
        return nil
    }
}
