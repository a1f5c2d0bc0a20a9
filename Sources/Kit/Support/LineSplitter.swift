/// Splits a child's output into lines (plugins, MCP servers on stdio); a line over the limit is
/// dropped whole and counted, so a child that never writes a newline costs bounded memory.
public struct LineSplitter: Sendable {
    public let maxLineBytes: Int
    private var pending: [UInt8] = []
    private var discarding = false
    public var dropped = 0

    public init(maxLineBytes: Int) { self.maxLineBytes = maxLineBytes }

    /// Only the new chunk is searched for newlines, so a long line costs linear time.
    public mutating func take(_ chunk: [UInt8]) -> [String] {
        var lines: [String] = []
        var rest = chunk[...]
        while let nl = rest.firstIndex(of: 10) {
            let part = rest[rest.startIndex..<nl]
            if discarding {
                discarding = false
            } else if pending.count + part.count > maxLineBytes {
                dropped += 1
            } else {
                pending.append(contentsOf: part)
                lines.append(String(decoding: pending, as: UTF8.self))
            }
            pending.removeAll(keepingCapacity: true)
            rest = rest[rest.index(after: nl)...]
        }
        if !discarding {
            if pending.count + rest.count > maxLineBytes {
                dropped += 1
                discarding = true
                pending.removeAll()
            } else {
                pending.append(contentsOf: rest)
            }
        }
        return lines
    }
}
