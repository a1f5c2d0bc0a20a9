import CSdBus
import Glibc

/// DBusValue to and from sd-bus messages, through sd-bus's non-variadic calls (append_basic,
/// open_container, read_basic, enter_container), so every value is typed by the enum, not by a
/// format string.
enum DBusMessageCoding {
    static func append(_ m: OpaquePointer?, _ value: DBusValue) -> Int32 {
        func basic<T: BitwiseCopyable>(_ type: Character, _ v: T) -> Int32 {
            withUnsafePointer(to: v) { sd_bus_message_append_basic(m, CChar(type.asciiValue!), UnsafeRawPointer($0)) }
        }
        switch value {
        case .byte(let v): return basic("y", v)
        case .bool(let v): return basic("b", Int32(v ? 1 : 0))
        case .int32(let v): return basic("i", v)
        case .uint32(let v): return basic("u", v)
        case .int64(let v): return basic("x", v)
        case .uint64(let v): return basic("t", v)
        case .double(let v): return basic("d", v)
        case .fd(let v): return basic("h", v)  // sd-bus sends a duplicate
        // String types take the characters themselves, not a pointer to them.
        case .string(let s): return s.withCString { sd_bus_message_append_basic(m, CChar(UInt8(ascii: "s")), $0) }
        case .objectPath(let s): return s.withCString { sd_bus_message_append_basic(m, CChar(UInt8(ascii: "o")), $0) }
        case .signature(let s): return s.withCString { sd_bus_message_append_basic(m, CChar(UInt8(ascii: "g")), $0) }
        case .variant(let inner): return container(m, "v", inner.signature, [inner])
        case .array(let element, let items): return container(m, "a", element, items)
        case .entry(let k, let v): return container(m, "e", k.signature + v.signature, [k, v])
        case .structure(let fields): return container(m, "r", fields.map(\.signature).joined(), fields)
        }
    }

    private static func container(_ m: OpaquePointer?, _ type: Character, _ contents: String, _ items: [DBusValue]) -> Int32 {
        var r = contents.withCString { sd_bus_message_open_container(m, CChar(type.asciiValue!), $0) }
        guard r >= 0 else { return r }
        for item in items {
            r = append(m, item)
            guard r >= 0 else { return r }
        }
        return sd_bus_message_close_container(m)
    }

    /// Every remaining value at the current level of `m` (a message's arguments, a container's items).
    static func readAll(_ m: OpaquePointer?) -> [DBusValue]? {
        var values: [DBusValue] = []
        while true {
            var type: CChar = 0
            var contents: UnsafePointer<CChar>?
            let r = sd_bus_message_peek_type(m, &type, &contents)
            if r == 0 { return values }
            guard r > 0, let v = read(m, type: UInt8(bitPattern: type), contents: contents.map { String(cString: $0) }) else { return nil }
            values.append(v)
        }
    }

    private static func read(_ m: OpaquePointer?, type: UInt8, contents: String?) -> DBusValue? {
        func basic<T: BitwiseCopyable>(_ zero: T) -> T? {
            var v = zero
            let r = withUnsafeMutablePointer(to: &v) { sd_bus_message_read_basic(m, CChar(bitPattern: type), UnsafeMutableRawPointer($0)) }
            return r > 0 ? v : nil
        }
        func text() -> String? {
            var p: UnsafePointer<CChar>?
            guard sd_bus_message_read_basic(m, CChar(bitPattern: type), &p) > 0, let p else { return nil }
            return String(cString: p)
        }
        switch type {
        case UInt8(ascii: "y"): return basic(UInt8(0)).map { .byte($0) }
        case UInt8(ascii: "b"): return basic(Int32(0)).map { .bool($0 != 0) }
        case UInt8(ascii: "n"): return basic(Int16(0)).map { .int32(Int32($0)) }
        case UInt8(ascii: "q"): return basic(UInt16(0)).map { .uint32(UInt32($0)) }
        case UInt8(ascii: "i"): return basic(Int32(0)).map { .int32($0) }
        case UInt8(ascii: "u"): return basic(UInt32(0)).map { .uint32($0) }
        case UInt8(ascii: "x"): return basic(Int64(0)).map { .int64($0) }
        case UInt8(ascii: "t"): return basic(UInt64(0)).map { .uint64($0) }
        case UInt8(ascii: "d"): return basic(Double(0)).map { .double($0) }
        // The message owns a received fd: the value carries a duplicate the caller closes.
        case UInt8(ascii: "h"): return basic(Int32(-1)).map { .fd(fcntl($0, F_DUPFD_CLOEXEC, 3)) }
        case UInt8(ascii: "s"): return text().map { .string($0) }
        case UInt8(ascii: "o"): return text().map { .objectPath($0) }
        case UInt8(ascii: "g"): return text().map { .signature($0) }
        case UInt8(ascii: "v"), UInt8(ascii: "a"), UInt8(ascii: "r"), UInt8(ascii: "e"):
            guard let contents else { return nil }
            let entered = contents.withCString { sd_bus_message_enter_container(m, CChar(bitPattern: type), $0) }
            guard entered > 0, let items = readAll(m), sd_bus_message_exit_container(m) >= 0 else { return nil }
            switch type {
            case UInt8(ascii: "v"): return items.first.map { .variant($0) }
            case UInt8(ascii: "a"): return .array(contents, items)
            case UInt8(ascii: "e"): return items.count == 2 ? .entry(items[0], items[1]) : nil
            default: return .structure(items)
            }
        default:
            return nil
        }
    }
}
