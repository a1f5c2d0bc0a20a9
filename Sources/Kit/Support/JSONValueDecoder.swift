/// Decodes a Decodable from a JSONValue tree, with errors that name the field and say what was
/// found ("count: expected an integer, found 1.5"). Foundation's JSONDecoder reports several of
/// these as "The given data was not valid JSON", which is no help to the caller of a command.
public struct JSONValueDecodingError: Error, Sendable, CustomStringConvertible {
    public let path: String
    public let reason: String
    public var description: String {
        if path.isEmpty { return reason }
        return reason.hasPrefix("is ") || reason.hasPrefix("has ") ? "\(path) \(reason)" : "\(path): \(reason)"
    }
}

public enum JSONValueDecoder {
    public static func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws(JSONValueDecodingError) -> T {
        do { return try T(from: TreeDecoder(value: value, path: [])) }
        catch let e as JSONValueDecodingError { throw e }
        catch { throw JSONValueDecodingError(path: "", reason: "\(error)") }
    }
}

/// Any coding key (for decoders that only need to check a value is an object).
public struct PathKey: CodingKey {
    public var stringValue: String
    public var intValue: Int?
    public init(stringValue: String) { self.stringValue = stringValue }
    public init(intValue: Int) { self.stringValue = "\(intValue)"; self.intValue = intValue }
}

private func render(_ path: [CodingKey]) -> String {
    var out = ""
    for k in path {
        if let i = k.intValue { out += "[\(i)]" } else { out += out.isEmpty ? k.stringValue : ".\(k.stringValue)" }
    }
    return out
}

private func describe(_ v: JSONValue) -> String { v.brief }

private struct TreeDecoder: Decoder {
    let value: JSONValue
    let path: [CodingKey]
    var codingPath: [CodingKey] { path }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func fail(_ reason: String) -> JSONValueDecodingError { JSONValueDecodingError(path: render(path), reason: reason) }

    func container<Key: CodingKey>(keyedBy: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let o) = value else {
            throw path.isEmpty ? JSONValueDecodingError(path: "", reason: "params must be a JSON object, found \(describe(value))")
                               : fail("expected an object, found \(describe(value))")
        }
        return KeyedDecodingContainer(Keyed<Key>(object: o, path: path))
    }

    func unkeyedContainer() throws -> UnkeyedDecodingContainer {
        guard case .array(let a) = value else { throw fail("expected an array, found \(describe(value))") }
        return Unkeyed(items: a, path: path)
    }

    func singleValueContainer() throws -> SingleValueDecodingContainer { Single(value: value, path: path) }
}

private struct Keyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let object: [String: JSONValue]
    let path: [CodingKey]
    var codingPath: [CodingKey] { path }
    var allKeys: [Key] { object.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { object[key.stringValue] != nil }

    func child(_ key: Key) throws -> TreeDecoder {
        guard let v = object[key.stringValue] else {
            throw JSONValueDecodingError(path: render(path + [key]), reason: "is required")
        }
        return TreeDecoder(value: v, path: path + [key])
    }

    func decodeNil(forKey key: Key) throws -> Bool { object[key.stringValue].map { $0 == .null } ?? true }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        let c = try child(key)
        if T.self == JSONValue.self { return c.value as! T }  // taken as it is, null included
        if c.value == .null {
            throw JSONValueDecodingError(path: render(c.path), reason: "is required (found null)")
        }
        return try T(from: c)
    }

    // Optional fields: absent and null both decode to nil.
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let v = object[key.stringValue], v != .null else { return nil }
        if T.self == JSONValue.self { return (v as! T) }
        return try T(from: TreeDecoder(value: v, path: path + [key]))
    }

    func nestedContainer<N: CodingKey>(keyedBy: N.Type, forKey key: Key) throws -> KeyedDecodingContainer<N> {
        try child(key).container(keyedBy: N.self)
    }
    func nestedUnkeyedContainer(forKey key: Key) throws -> UnkeyedDecodingContainer { try child(key).unkeyedContainer() }
    func superDecoder() throws -> Decoder { TreeDecoder(value: .object(object), path: path) }
    func superDecoder(forKey key: Key) throws -> Decoder { try child(key) }
}

private struct Unkeyed: UnkeyedDecodingContainer {
    let items: [JSONValue]
    let path: [CodingKey]
    var currentIndex = 0
    var codingPath: [CodingKey] { path }
    var count: Int? { items.count }
    var isAtEnd: Bool { currentIndex >= items.count }

    init(items: [JSONValue], path: [CodingKey]) { self.items = items; self.path = path }

    mutating func next() throws -> TreeDecoder {
        guard !isAtEnd else { throw JSONValueDecodingError(path: render(path), reason: "has too few elements") }
        defer { currentIndex += 1 }
        return TreeDecoder(value: items[currentIndex], path: path + [PathKey(intValue: currentIndex)])
    }

    mutating func decodeNil() throws -> Bool {
        if !isAtEnd, items[currentIndex] == .null { currentIndex += 1; return true }
        return false
    }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let d = try next()
        if T.self == JSONValue.self { return d.value as! T }
        return try T(from: d)
    }
    mutating func nestedContainer<N: CodingKey>(keyedBy: N.Type) throws -> KeyedDecodingContainer<N> { try next().container(keyedBy: N.self) }
    mutating func nestedUnkeyedContainer() throws -> UnkeyedDecodingContainer { try next().unkeyedContainer() }
    mutating func superDecoder() throws -> Decoder { try next() }
}

private struct Single: SingleValueDecodingContainer {
    let value: JSONValue
    let path: [CodingKey]
    var codingPath: [CodingKey] { path }

    func fail(_ expected: String) -> JSONValueDecodingError {
        JSONValueDecodingError(path: render(path), reason: "expected \(expected), found \(describe(value))")
    }

    func decodeNil() -> Bool { value == .null }
    func decode(_ type: Bool.Type) throws -> Bool { guard case .bool(let b) = value else { throw fail("a boolean") }; return b }
    func decode(_ type: String.Type) throws -> String { guard case .string(let s) = value else { throw fail("a string") }; return s }
    func decode(_ type: Double.Type) throws -> Double { guard case .number(let n) = value else { throw fail("a number") }; return n }
    func decode(_ type: Float.Type) throws -> Float { Float(try decode(Double.self)) }

    func integer<T: FixedWidthInteger>(_ t: T.Type) throws -> T {
        guard case .number(let n) = value, n.rounded() == n, let i = T(exactly: n) else { throw fail("an integer") }
        return i
    }
    func decode(_ type: Int.Type) throws -> Int { try integer(Int.self) }
    func decode(_ type: Int8.Type) throws -> Int8 { try integer(Int8.self) }
    func decode(_ type: Int16.Type) throws -> Int16 { try integer(Int16.self) }
    func decode(_ type: Int32.Type) throws -> Int32 { try integer(Int32.self) }
    func decode(_ type: Int64.Type) throws -> Int64 { try integer(Int64.self) }
    func decode(_ type: UInt.Type) throws -> UInt { try integer(UInt.self) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(UInt8.self) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(UInt16.self) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(UInt32.self) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(UInt64.self) }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        if T.self == JSONValue.self { return value as! T }
        return try T(from: TreeDecoder(value: value, path: path))
    }
}
