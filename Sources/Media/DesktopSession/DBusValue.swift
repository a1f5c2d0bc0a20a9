import Glibc

/// One D-Bus value, typed as on the wire: what the desktop APIs take and return (a{sv} option
/// dictionaries, object paths, unix fds). Kept small: only what Mutter, KWin and the portals use.
public indirect enum DBusValue: Sendable, Equatable {
    case byte(UInt8)
    case bool(Bool)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(String)
    case signature(String)
    /// A unix fd: sent as a duplicate; a received one is the caller's to close.
    case fd(Int32)
    case variant(DBusValue)
    /// An array and the signature of its elements ("s", "{sv}", "(ii)").
    case array(String, [DBusValue])
    /// A dictionary entry, inside an array whose element signature is "{kv}".
    case entry(DBusValue, DBusValue)
    case structure([DBusValue])

    /// The value's own D-Bus signature.
    public var signature: String {
        switch self {
        case .byte: "y"
        case .bool: "b"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .fd: "h"
        case .variant: "v"
        case .array(let element, _): "a" + element
        case .entry(let k, let v): "{" + k.signature + v.signature + "}"
        case .structure(let fields): "(" + fields.map(\.signature).joined() + ")"
        }
    }

    /// An a{sv} dictionary, the options argument of most desktop calls.
    public static func options(_ pairs: [(String, DBusValue)]) -> DBusValue {
        .array("{sv}", pairs.map { .entry(.string($0.0), .variant($0.1)) })
    }

    // MARK: reading

    public var string: String? {
        switch self {
        case .string(let s), .objectPath(let s), .signature(let s): s
        case .variant(let v): v.string
        default: nil
        }
    }

    public var int: Int? {
        switch self {
        case .byte(let v): Int(v)
        case .int32(let v): Int(v)
        case .uint32(let v): Int(v)
        case .int64(let v): Int(v)
        case .uint64(let v): Int(exactly: v)
        case .variant(let v): v.int
        default: nil
        }
    }

    public var bool: Bool? {
        switch self {
        case .bool(let b): b
        case .variant(let v): v.bool
        default: nil
        }
    }

    public var double: Double? {
        switch self {
        case .double(let d): d
        case .variant(let v): v.double
        default: int.map(Double.init)
        }
    }

    /// The elements of an array (through a variant).
    public var elements: [DBusValue] {
        switch self {
        case .array(_, let items): items
        case .variant(let v): v.elements
        default: []
        }
    }

    /// The fields of a struct (through a variant).
    public var fields: [DBusValue] {
        switch self {
        case .structure(let f): f
        case .variant(let v): v.fields
        default: []
        }
    }

    /// The value under `key` of an a{sv} (or any string-keyed) dictionary, variants unwrapped.
    public subscript(key: String) -> DBusValue? {
        for item in elements {
            if case .entry(let k, let v) = item, k.string == key {
                if case .variant(let inner) = v { return inner }
                return v
            }
        }
        return nil
    }
}
