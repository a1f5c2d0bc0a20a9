import Glibc

/// A plain JSON value: what travels on the wire and what command payloads are built from.
/// (The JSON5 parser produces `JSON5Node`, which also remembers where each value came from.)
public enum JSONValue: Sendable, Equatable, Hashable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public subscript(key: String) -> JSONValue? {
        if case .object(let o) = self { return o[key] }
        return nil
    }

    public var stringValue: String? { if case .string(let s) = self { return s }; return nil }
    public var doubleValue: Double? { if case .number(let n) = self { return n }; return nil }
    public var boolValue: Bool? { if case .bool(let b) = self { return b }; return nil }
    public var intValue: Int? {
        guard case .number(let n) = self, n.rounded() == n, abs(n) < 9.0e15 else { return nil }
        return Int(n)
    }
    public var objectValue: [String: JSONValue]? { if case .object(let o) = self { return o }; return nil }
    public var arrayValue: [JSONValue]? { if case .array(let a) = self { return a }; return nil }

    /// The value in a few words, for error messages ("1.5", "a string (\"abc\")", "an object").
    public var brief: String {
        switch self {
        case .null: return "null"
        case .bool(let b): return "\(b)"
        case .number(let n): return NumberText.plain(n)
        case .string(let s): return "a string (\"\(s.prefix(40))\")"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}

/// Numbers in messages and documentation: whole numbers without ".0" (9000, not 9000.0).
public enum NumberText {
    public static func plain(_ n: Double) -> String { n.rounded() == n && abs(n) < 1e15 ? "\(Int64(n))" : "\(n)" }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
                     ExpressibleByDictionaryLiteral, ExpressibleByArrayLiteral, ExpressibleByFloatLiteral,
                     ExpressibleByNilLiteral {
    public init(stringLiteral v: String) { self = .string(v) }
    public init(integerLiteral v: Int) { self = .number(Double(v)) }
    public init(floatLiteral v: Double) { self = .number(v) }
    public init(booleanLiteral v: Bool) { self = .bool(v) }
    public init(nilLiteral: ()) { self = .null }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
}

extension JSONValue: Codable {
    public init(from decoder: Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null }
        else if let b = try? c.decode(Bool.self) { self = .bool(b) }
        else if let n = try? c.decode(Double.self) { self = .number(n) }
        else if let s = try? c.decode(String.self) { self = .string(s) }
        else if let a = try? c.decode([JSONValue].self) { self = .array(a) }
        else if let o = try? c.decode([String: JSONValue].self) { self = .object(o) }
        else { throw DecodingError.dataCorruptedError(in: c, debugDescription: "not a JSON value") }
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .null: try c.encodeNil()
        case .bool(let b): try c.encode(b)
        case .number(let n):
            // Integers print without a fraction so ids, sizes and timestamps stay readable.
            if n.rounded() == n, abs(n) < 9.0e15 { try c.encode(Int64(n)) } else { try c.encode(n) }
        case .string(let s): try c.encode(s)
        case .array(let a): try c.encode(a)
        case .object(let o): try c.encode(o)
        }
    }
}

extension JSONValue {
    /// JSON text with sorted keys (stable output for logs, tests and the wire): compact
    /// (JSONWriter), or laid out with two-space indents for people (`indentedText`).
    public func jsonString(pretty: Bool = false) -> String {
        pretty ? indentedText(indent: 2) : String(decoding: jsonBytes, as: UTF8.self)
    }

    /// Parses strict JSON text (the wire format; JSONParser); nil when it is not JSON.
    public static func parse(_ text: String) -> JSONValue? { try? JSONParser.parse(text) }

    public static func parse(_ bytes: [UInt8]) -> JSONValue? { try? JSONParser.parse(bytes) }

    public static func parse(_ bytes: ArraySlice<UInt8>) -> JSONValue? { try? JSONParser.parse(bytes) }

    /// Encodes any Encodable value into a JSONValue tree (JSONValueEncoder: no bytes in between).
    public static func from<T: Encodable>(_ value: T) throws -> JSONValue { try JSONValueEncoder.encode(value) }
}
