import Config
import Support

/// Checks, when a bundle loads, that a command's Swift params type reads exactly the params its
/// manifest row declares, with fitting types: it decodes the type once from a stand-in decoder that
/// answers from the manifest (each enum's every allowed value is tried) and notes every key the
/// type asks for. Swift has no other way to list a Decodable's fields; the decoder sees exactly the
/// reads the real decode makes, custom `init(from:)` included.
///
/// The rules: a param with a default or `required: true` is a non-Optional field (the host has
/// filled it in before the handler runs); one without is Optional; `integer` reads as an integer
/// type, `number` as Double, `enum` as String or a String-backed enum that accepts every allowed
/// value, `object` as a struct, `array` as an Array, `any` as JSONValue.
public enum ParamsSchemaProbe {
    public static func mismatches<P: Decodable>(_ type: P.Type, fields: [ConfigField]) -> [String] {
        let log = ProbeLog(typeName: String(describing: P.self))
        do { _ = try P(from: ProbeDecoder(type: .object(fields), path: [], log: log, sample: nil)) }
        catch is ProbeStop { return log.problems }  // stopped part way: what it did not read yet is no news
        catch { return log.problems + ["\(log.typeName) could not be decoded from its manifest's params: \(error)"] }
        let unread = log.declared.filter { !log.read.contains($0) }
        return log.problems + unread.map { "the manifest declares \($0), which \(log.typeName) does not read" }
    }
}

/// Thrown to stop a probe at the first read it cannot answer (the problem is already noted).
private struct ProbeStop: Error {}

private final class ProbeLog {
    let typeName: String
    var problems: [String] = []
    /// Param paths the manifest declares, in the order the probe met their objects.
    var declared: [String] = []
    var read: Set<String> = []
    init(typeName: String) { self.typeName = typeName }

    func fail(_ problem: String) -> ProbeStop { problems.append(problem); return ProbeStop() }
}

private func join(_ path: [String], _ key: String) -> [String] { path + [key] }
private func text(_ path: [String]) -> String { path.isEmpty ? "the params" : path.joined(separator: ".") }

/// Stands in for the params tree at `path`, whose manifest type is `type`. `sample`: the string an
/// enum read answers with.
private struct ProbeDecoder: Decoder {
    let type: ConfigType
    let path: [String]
    let log: ProbeLog
    let sample: String?
    var codingPath: [CodingKey] { path.map { PathKey(stringValue: $0) } }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy: Key.Type) throws -> KeyedDecodingContainer<Key> {
        switch type.shape {
        case .object(let fields):
            for f in fields { log.declared.append(text(join(path, f.key))) }
            return KeyedDecodingContainer(ProbeKeyed<Key>(fields: fields, path: path, log: log))
        case .map, .any:
            // Free keys (a map read as a Dictionary): nothing to compare key by key.
            return KeyedDecodingContainer(ProbeKeyed<Key>(fields: [], path: path, log: log, free: true))
        default:
            throw log.fail("\(log.typeName) reads \(text(path)) as an object, but the manifest says \(type.description)")
        }
    }

    func unkeyedContainer() throws -> UnkeyedDecodingContainer {
        switch type {
        case .list(let item): return ProbeUnkeyed(item: item, path: path, log: log)
        case .stringArray: return ProbeUnkeyed(item: .string, path: path, log: log)
        case .any: return ProbeUnkeyed(item: .any, path: path, log: log)
        default: throw log.fail("\(log.typeName) reads \(text(path)) as an array, but the manifest says \(type.description)")
        }
    }

    func singleValueContainer() throws -> SingleValueDecodingContainer { ProbeSingle(decoder: self) }
}

private struct ProbeKeyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let fields: [ConfigField]
    let path: [String]
    let log: ProbeLog
    var free = false
    var codingPath: [CodingKey] { path.map { PathKey(stringValue: $0) } }
    var allKeys: [Key] { fields.compactMap { Key(stringValue: $0.key) } }
    func contains(_ key: Key) -> Bool { free || fields.contains { $0.key == key.stringValue } }
    func decodeNil(forKey key: Key) throws -> Bool { false }

    /// The field `key` names, noting the read and whether an Optional is right for it.
    private func field(_ key: Key, optional: Bool) throws -> ConfigField {
        let p = join(path, key.stringValue)
        guard let f = fields.first(where: { $0.key == key.stringValue }) else {
            if free { return ConfigField(key.stringValue, .any, "") }
            throw log.fail("\(log.typeName) reads \(text(p)), which the manifest does not declare")
        }
        log.read.insert(text(p))
        let filled = f.required || f.defaultValue != nil
        if optional && filled {
            log.problems.append("\(text(p)) is \(f.required ? "required" : "given a default") in the manifest, so \(log.typeName)'s field for it must not be Optional")
        } else if !optional && !filled {
            log.problems.append("\(text(p)) may be absent (no default in the manifest), so \(log.typeName)'s field for it must be Optional")
        }
        return f
    }

    func decode<T: Decodable>(_ t: T.Type, forKey key: Key) throws -> T {
        let f = try field(key, optional: false)
        return try probeValue(T.self, f.type, join(path, key.stringValue), log)
    }

    func decodeIfPresent<T: Decodable>(_ t: T.Type, forKey key: Key) throws -> T? { try optional(t, key) }

    // The standard library's own decodeIfPresent for these types would call decode(_:forKey:) and
    // hide that the field is Optional.
    func decodeIfPresent(_ t: Bool.Type, forKey key: Key) throws -> Bool? { try optional(t, key) }
    func decodeIfPresent(_ t: String.Type, forKey key: Key) throws -> String? { try optional(t, key) }
    func decodeIfPresent(_ t: Double.Type, forKey key: Key) throws -> Double? { try optional(t, key) }
    func decodeIfPresent(_ t: Float.Type, forKey key: Key) throws -> Float? { try optional(t, key) }
    func decodeIfPresent(_ t: Int.Type, forKey key: Key) throws -> Int? { try optional(t, key) }
    func decodeIfPresent(_ t: Int8.Type, forKey key: Key) throws -> Int8? { try optional(t, key) }
    func decodeIfPresent(_ t: Int16.Type, forKey key: Key) throws -> Int16? { try optional(t, key) }
    func decodeIfPresent(_ t: Int32.Type, forKey key: Key) throws -> Int32? { try optional(t, key) }
    func decodeIfPresent(_ t: Int64.Type, forKey key: Key) throws -> Int64? { try optional(t, key) }
    func decodeIfPresent(_ t: UInt.Type, forKey key: Key) throws -> UInt? { try optional(t, key) }
    func decodeIfPresent(_ t: UInt8.Type, forKey key: Key) throws -> UInt8? { try optional(t, key) }
    func decodeIfPresent(_ t: UInt16.Type, forKey key: Key) throws -> UInt16? { try optional(t, key) }
    func decodeIfPresent(_ t: UInt32.Type, forKey key: Key) throws -> UInt32? { try optional(t, key) }
    func decodeIfPresent(_ t: UInt64.Type, forKey key: Key) throws -> UInt64? { try optional(t, key) }
    private func optional<T: Decodable>(_ t: T.Type, _ key: Key) throws -> T? {
        let f = try field(key, optional: true)
        return try probeValue(T.self, f.type, join(path, key.stringValue), log)
    }

    func nestedContainer<N: CodingKey>(keyedBy: N.Type, forKey key: Key) throws -> KeyedDecodingContainer<N> {
        let f = try field(key, optional: false)
        return try ProbeDecoder(type: f.type, path: join(path, key.stringValue), log: log, sample: nil).container(keyedBy: N.self)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> UnkeyedDecodingContainer {
        let f = try field(key, optional: false)
        return try ProbeDecoder(type: f.type, path: join(path, key.stringValue), log: log, sample: nil).unkeyedContainer()
    }

    func superDecoder() throws -> Decoder { ProbeDecoder(type: .object(fields), path: path, log: log, sample: nil) }
    func superDecoder(forKey key: Key) throws -> Decoder {
        let f = try field(key, optional: false)
        return ProbeDecoder(type: f.type, path: join(path, key.stringValue), log: log, sample: nil)
    }
}

/// An array: one item, so the item type is probed once.
private struct ProbeUnkeyed: UnkeyedDecodingContainer {
    let item: ConfigType
    let path: [String]
    let log: ProbeLog
    var currentIndex = 0
    var count: Int? { 1 }
    var isAtEnd: Bool { currentIndex >= 1 }
    var codingPath: [CodingKey] { path.map { PathKey(stringValue: $0) } }

    init(item: ConfigType, path: [String], log: ProbeLog) { self.item = item; self.path = path; self.log = log }

    private mutating func next() -> ProbeDecoder {
        currentIndex += 1
        return ProbeDecoder(type: item, path: path + ["[]"], log: log, sample: nil)
    }
    mutating func decodeNil() throws -> Bool { false }
    mutating func decode<T: Decodable>(_ t: T.Type) throws -> T {
        let d = next()
        return try probeValue(T.self, d.type, d.path, log)
    }
    mutating func nestedContainer<N: CodingKey>(keyedBy: N.Type) throws -> KeyedDecodingContainer<N> { try next().container(keyedBy: N.self) }
    mutating func nestedUnkeyedContainer() throws -> UnkeyedDecodingContainer { try next().unkeyedContainer() }
    mutating func superDecoder() throws -> Decoder { next() }
}

private struct ProbeSingle: SingleValueDecodingContainer {
    let decoder: ProbeDecoder
    var codingPath: [CodingKey] { decoder.codingPath }
    private var type: ConfigType { decoder.type }

    private func wrong(_ swift: String) -> ProbeStop {
        decoder.log.fail("\(decoder.log.typeName) reads \(text(decoder.path)) as \(swift), but the manifest says \(type.description)")
    }

    func decodeNil() -> Bool { false }
    func decode(_ t: Bool.Type) throws -> Bool {
        switch type { case .bool, .any: return false; default: throw wrong("a Bool") }
    }
    func decode(_ t: String.Type) throws -> String {
        switch type {
        case .string, .domainName, .hostPort, .any: return decoder.sample ?? ""
        case .enumeration(let values): return decoder.sample ?? values[0]
        default: throw wrong("a String")
        }
    }
    func decode(_ t: Double.Type) throws -> Double {
        switch type {
        case .number(let r): return r.lowerBound
        case .integer(let r): return Double(r.lowerBound)
        case .any: return 0
        default: throw wrong("a Double")
        }
    }
    func decode(_ t: Float.Type) throws -> Float { Float(try decode(Double.self)) }
    private func integer<I: FixedWidthInteger>(_ t: I.Type) throws -> I {
        switch type {
        case .integer(let r):
            guard let lo = I(exactly: r.lowerBound), I(exactly: r.upperBound) != nil else {
                throw wrong("\(I.self), which cannot hold \(r.lowerBound)...\(r.upperBound)")
            }
            return lo
        case .any: return 0
        default: throw wrong("an integer (\(I.self))")
        }
    }
    func decode(_ t: Int.Type) throws -> Int { try integer(Int.self) }
    func decode(_ t: Int8.Type) throws -> Int8 { try integer(Int8.self) }
    func decode(_ t: Int16.Type) throws -> Int16 { try integer(Int16.self) }
    func decode(_ t: Int32.Type) throws -> Int32 { try integer(Int32.self) }
    func decode(_ t: Int64.Type) throws -> Int64 { try integer(Int64.self) }
    func decode(_ t: UInt.Type) throws -> UInt { try integer(UInt.self) }
    func decode(_ t: UInt8.Type) throws -> UInt8 { try integer(UInt8.self) }
    func decode(_ t: UInt16.Type) throws -> UInt16 { try integer(UInt16.self) }
    func decode(_ t: UInt32.Type) throws -> UInt32 { try integer(UInt32.self) }
    func decode(_ t: UInt64.Type) throws -> UInt64 { try integer(UInt64.self) }
    func decode<T: Decodable>(_ t: T.Type) throws -> T { try probeValue(T.self, type, decoder.path, decoder.log) }
}

/// Decodes one value of Swift type `T` standing for a param of manifest type `type`. A JSONValue
/// takes anything; an enum param is tried with each allowed value, so a Swift enum missing one of
/// them is caught here rather than by the first caller who sends it.
private func probeValue<T: Decodable>(_ t: T.Type, _ type: ConfigType, _ path: [String], _ log: ProbeLog) throws -> T {
    if T.self == JSONValue.self { return JSONValue.null as! T }
    let decoder = ProbeDecoder(type: type, path: path, log: log, sample: nil)
    switch type {
    case .enumeration(let values) where T.self != String.self:
        var first: T?
        for v in values {
            do { let x = try T(from: ProbeDecoder(type: type, path: path, log: log, sample: v)); first = first ?? x }
            catch is ProbeStop { throw ProbeStop() }
            catch { log.problems.append("the manifest allows \(text(path)) \"\(v)\", which \(T.self) does not accept") }
        }
        guard let first else { throw ProbeStop() }
        return first
    default:
        return try T(from: decoder)
    }
}
