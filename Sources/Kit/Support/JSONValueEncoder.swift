/// Encodes an Encodable into a JSONValue tree, the mirror of JSONValueDecoder: no bytes are written
/// (JSONWriter writes the tree once, where it goes). Optionals that are nil are left out (the
/// synthesized `encodeIfPresent`), integers become numbers, a `JSONValue` inside the value is taken
/// as it is, and a String is moved into the tree, not copied (a 5 MB base64 payload stays one buffer).
public enum JSONValueEncoder {
    public static func encode<T: Encodable>(_ value: T) throws -> JSONValue {
        if let v = value as? JSONValue { return v }
        let root = Slot()
        try value.encode(to: TreeEncoder(slot: root, path: []))
        return root.finish()
    }
}

/// One value under construction. A container writes into its slot, so nested containers and
/// super encoders handed out earlier still land in the tree.
private final class Slot {
    var value: JSONValue?
    var object: [String: Slot]?
    var array: [Slot]?

    init() {}
    init(_ value: JSONValue) { self.value = value }

    func finish() -> JSONValue {
        if let value { return value }
        if let object { return .object(object.mapValues { $0.finish() }) }
        if let array { return .array(array.map { $0.finish() }) }
        return .object([:])  // a value that encoded nothing (JSONEncoder would refuse it)
    }
}

/// A number as JSONValue holds it; Float through its shortest text, as JSONEncoder writes it (0.1, not 0.100000001).
private func number(_ f: Float) -> JSONValue { .number(Double("\(f)") ?? Double(f)) }

private func child<T: Encodable>(_ value: T, path: [CodingKey]) throws -> Slot {
    if let v = value as? JSONValue { return Slot(v) }
    let slot = Slot()
    try value.encode(to: TreeEncoder(slot: slot, path: path))
    return slot
}

private struct TreeEncoder: Encoder {
    let slot: Slot
    let path: [CodingKey]
    var codingPath: [CodingKey] { path }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy: Key.Type) -> KeyedEncodingContainer<Key> {
        if slot.object == nil { slot.object = [:] }
        return KeyedEncodingContainer(Keyed<Key>(slot: slot, path: path))
    }

    func unkeyedContainer() -> UnkeyedEncodingContainer {
        if slot.array == nil { slot.array = [] }
        return Unkeyed(slot: slot, path: path)
    }

    func singleValueContainer() -> SingleValueEncodingContainer { Single(slot: slot, path: path) }
}

private struct Keyed<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let slot: Slot
    let path: [CodingKey]
    var codingPath: [CodingKey] { path }

    func put(_ v: JSONValue, _ key: Key) { slot.object![key.stringValue] = Slot(v) }

    mutating func encodeNil(forKey key: Key) throws { put(.null, key) }
    mutating func encode(_ v: Bool, forKey key: Key) throws { put(.bool(v), key) }
    mutating func encode(_ v: String, forKey key: Key) throws { put(.string(v), key) }
    mutating func encode(_ v: Double, forKey key: Key) throws { put(.number(v), key) }
    mutating func encode(_ v: Float, forKey key: Key) throws { put(number(v), key) }
    mutating func encode(_ v: Int, forKey key: Key) throws { put(.number(Double(v)), key) }
    mutating func encode(_ v: Int8, forKey key: Key) throws { put(.number(Double(v)), key) }
    mutating func encode(_ v: Int16, forKey key: Key) throws { put(.number(Double(v)), key) }
    mutating func encode(_ v: Int32, forKey key: Key) throws { put(.number(Double(v)), key) }
    mutating func encode(_ v: Int64, forKey key: Key) throws { put(.number(Double(v)), key) }
    mutating func encode(_ v: UInt, forKey key: Key) throws { put(.number(Double(v)), key) }
    mutating func encode(_ v: UInt8, forKey key: Key) throws { put(.number(Double(v)), key) }
    mutating func encode(_ v: UInt16, forKey key: Key) throws { put(.number(Double(v)), key) }
    mutating func encode(_ v: UInt32, forKey key: Key) throws { put(.number(Double(v)), key) }
    mutating func encode(_ v: UInt64, forKey key: Key) throws { put(.number(Double(v)), key) }
    mutating func encode<T: Encodable>(_ v: T, forKey key: Key) throws {
        slot.object![key.stringValue] = try child(v, path: path + [key])
    }

    mutating func nestedContainer<N: CodingKey>(keyedBy: N.Type, forKey key: Key) -> KeyedEncodingContainer<N> {
        let s = Slot(); s.object = [:]
        slot.object![key.stringValue] = s
        return KeyedEncodingContainer(Keyed<N>(slot: s, path: path + [key]))
    }
    mutating func nestedUnkeyedContainer(forKey key: Key) -> UnkeyedEncodingContainer {
        let s = Slot(); s.array = []
        slot.object![key.stringValue] = s
        return Unkeyed(slot: s, path: path + [key])
    }
    mutating func superEncoder() -> Encoder { superEncoder(forKey: Key(stringValue: "super")!) }
    mutating func superEncoder(forKey key: Key) -> Encoder {
        let s = Slot()
        slot.object![key.stringValue] = s
        return TreeEncoder(slot: s, path: path + [key])
    }
}

/// The primitive writes of the unkeyed and single-value containers, which differ only in `put`.
private protocol PutsPrimitives {
    func put(_ v: JSONValue)
}

extension PutsPrimitives {
    func encodeNil() throws { put(.null) }
    func encode(_ v: Bool) throws { put(.bool(v)) }
    func encode(_ v: String) throws { put(.string(v)) }
    func encode(_ v: Double) throws { put(.number(v)) }
    func encode(_ v: Float) throws { put(number(v)) }
    func encode(_ v: Int) throws { put(.number(Double(v))) }
    func encode(_ v: Int8) throws { put(.number(Double(v))) }
    func encode(_ v: Int16) throws { put(.number(Double(v))) }
    func encode(_ v: Int32) throws { put(.number(Double(v))) }
    func encode(_ v: Int64) throws { put(.number(Double(v))) }
    func encode(_ v: UInt) throws { put(.number(Double(v))) }
    func encode(_ v: UInt8) throws { put(.number(Double(v))) }
    func encode(_ v: UInt16) throws { put(.number(Double(v))) }
    func encode(_ v: UInt32) throws { put(.number(Double(v))) }
    func encode(_ v: UInt64) throws { put(.number(Double(v))) }
}

private struct Unkeyed: UnkeyedEncodingContainer, PutsPrimitives {
    let slot: Slot
    let path: [CodingKey]
    var codingPath: [CodingKey] { path }
    var count: Int { slot.array!.count }
    var next: [CodingKey] { path + [PathKey(intValue: count)] }

    func put(_ v: JSONValue) { slot.array!.append(Slot(v)) }

    mutating func encode<T: Encodable>(_ v: T) throws { slot.array!.append(try child(v, path: next)) }

    mutating func nestedContainer<N: CodingKey>(keyedBy: N.Type) -> KeyedEncodingContainer<N> {
        let s = Slot(); s.object = [:]
        let p = next
        slot.array!.append(s)
        return KeyedEncodingContainer(Keyed<N>(slot: s, path: p))
    }
    mutating func nestedUnkeyedContainer() -> UnkeyedEncodingContainer {
        let s = Slot(); s.array = []
        let p = next
        slot.array!.append(s)
        return Unkeyed(slot: s, path: p)
    }
    mutating func superEncoder() -> Encoder {
        let s = Slot()
        let p = next
        slot.array!.append(s)
        return TreeEncoder(slot: s, path: p)
    }
}

private struct Single: SingleValueEncodingContainer, PutsPrimitives {
    let slot: Slot
    let path: [CodingKey]
    var codingPath: [CodingKey] { path }

    func put(_ v: JSONValue) { slot.value = v }

    mutating func encode<T: Encodable>(_ v: T) throws {
        if let j = v as? JSONValue { put(j); return }
        try v.encode(to: TreeEncoder(slot: slot, path: path))
    }
}
