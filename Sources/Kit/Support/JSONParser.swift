/// Strict JSON (RFC 8259) from UTF-8 bytes into a `JSONValue`, in one pass over the bytes: every
/// frame the gateway sends and every request on the control socket goes through here.
///
/// Why not JSONDecoder: it is most of what FoundationEssentials was loaded for (3.9 MiB of the
/// idle daemon), and it decodes through a generic Codable layer. The rules are RFC 8259's as
/// JSONDecoder applies them — any value at the top level, nesting at most 512 deep (a hostile
/// frame cannot exhaust the stack), no trailing text, no leading zeros, control characters escaped
/// inside strings — with three differences, each what the gateway's own JSON.parse does: trailing
/// commas are refused (JSONDecoder accepts them), a repeated key keeps its last value (JSONDecoder
/// keeps the first), and an unpaired UTF-16 surrogate escape becomes U+FFFD instead of failing the
/// whole frame. A number too large for a Double is refused rather than rounded to infinity.
public struct JSONParser {
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public let offset: Int
        public let reason: String
        public var description: String { "\(reason) at byte \(offset)" }
    }

    public static let maxDepth = 512

    public static func parse(_ bytes: [UInt8]) throws(Failure) -> JSONValue {
        // Typed-throws closures passed to withUnsafeBufferPointer break Swift 6.0: a Result instead.
        try bytes.withUnsafeBufferPointer { buf in Result { () throws(Failure) -> JSONValue in try parse(buffer: buf) } }.get()
    }

    public static func parse(_ bytes: ArraySlice<UInt8>) throws(Failure) -> JSONValue {
        // Typed-throws closures passed to withUnsafeBufferPointer break Swift 6.0: a Result instead.
        try bytes.withUnsafeBufferPointer { buf in Result { () throws(Failure) -> JSONValue in try parse(buffer: buf) } }.get()
    }

    public static func parse(_ text: String) throws(Failure) -> JSONValue {
        var text = text
        // withUTF8 rethrows untyped: the result carries the typed failure out.
        let result = text.withUTF8 { buf in Result { () throws(Failure) -> JSONValue in try parse(buffer: buf) } }
        return try result.get()
    }

    public static func parse(buffer: UnsafeBufferPointer<UInt8>) throws(Failure) -> JSONValue {
        var p = JSONParser(buffer)
        p.skipSpace()
        let v = try p.value(depth: 0)
        p.skipSpace()
        guard p.at == buffer.count else { throw p.failure("unexpected text after the JSON value") }
        return v
    }

    private let b: UnsafeBufferPointer<UInt8>
    private var at = 0

    private init(_ b: UnsafeBufferPointer<UInt8>) { self.b = b }

    private func failure(_ reason: String) -> Failure { Failure(offset: at, reason: reason) }

    private mutating func skipSpace() {
        while at < b.count, b[at] == 0x20 || b[at] == 0x0A || b[at] == 0x0D || b[at] == 0x09 { at += 1 }
    }

    private mutating func value(depth: Int) throws(Failure) -> JSONValue {
        guard at < b.count else { throw failure("unexpected end of input") }
        switch b[at] {
        case UInt8(ascii: "{"): return try object(depth: depth + 1)
        case UInt8(ascii: "["): return try array(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
        default: throw failure("unexpected character")
        }
    }

    private mutating func literal(_ word: StaticString) throws(Failure) {
        let n = word.utf8CodeUnitCount
        guard at + n <= b.count else { throw failure("unexpected end of input") }
        for i in 0..<n where b[at + i] != word.utf8Start[i] { throw failure("unexpected character") }
        at += n
    }

    private mutating func object(depth: Int) throws(Failure) -> JSONValue {
        guard depth <= Self.maxDepth else { throw failure("nested too deeply") }
        at += 1
        var members: [String: JSONValue] = [:]
        skipSpace()
        if at < b.count, b[at] == UInt8(ascii: "}") { at += 1; return .object(members) }
        while true {
            skipSpace()
            guard at < b.count, b[at] == UInt8(ascii: "\"") else { throw failure("expected a string key") }
            let key = try string()
            skipSpace()
            guard at < b.count, b[at] == UInt8(ascii: ":") else { throw failure("expected ':'") }
            at += 1
            skipSpace()
            members[key] = try value(depth: depth)
            skipSpace()
            guard at < b.count else { throw failure("unexpected end of input") }
            if b[at] == UInt8(ascii: ",") { at += 1; continue }
            if b[at] == UInt8(ascii: "}") { at += 1; return .object(members) }
            throw failure("expected ',' or '}'")
        }
    }

    private mutating func array(depth: Int) throws(Failure) -> JSONValue {
        guard depth <= Self.maxDepth else { throw failure("nested too deeply") }
        at += 1
        var items: [JSONValue] = []
        skipSpace()
        if at < b.count, b[at] == UInt8(ascii: "]") { at += 1; return .array(items) }
        while true {
            skipSpace()
            items.append(try value(depth: depth))
            skipSpace()
            guard at < b.count else { throw failure("unexpected end of input") }
            if b[at] == UInt8(ascii: ",") { at += 1; continue }
            if b[at] == UInt8(ascii: "]") { at += 1; return .array(items) }
            throw failure("expected ',' or ']'")
        }
    }

    /// A string literal (at its opening quote). Runs without escapes are copied as they are.
    private mutating func string() throws(Failure) -> String {
        at += 1
        let start = at
        while at < b.count, b[at] != UInt8(ascii: "\""), b[at] != UInt8(ascii: "\\"), b[at] >= 0x20 { at += 1 }
        guard at < b.count else { throw failure("unterminated string") }
        if b[at] == UInt8(ascii: "\"") {
            defer { at += 1 }
            return String(decoding: UnsafeBufferPointer(rebasing: b[start..<at]), as: UTF8.self)
        }
        var out = Array(b[start..<at])
        while true {
            // Copy the run up to the next quote, backslash or control byte in one piece.
            let run = at
            while at < b.count, b[at] != UInt8(ascii: "\""), b[at] != UInt8(ascii: "\\"), b[at] >= 0x20 { at += 1 }
            if at > run { out.append(contentsOf: UnsafeBufferPointer(rebasing: b[run..<at])) }
            guard at < b.count else { throw failure("unterminated string") }
            let c = b[at]
            if c == UInt8(ascii: "\"") { at += 1; return String(decoding: out, as: UTF8.self) }
            if c < 0x20 { throw failure("unescaped control character in a string") }
            at += 1
            guard at < b.count else { throw failure("unterminated string") }
            let e = b[at]
            at += 1
            switch e {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(e)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"): appendUTF8(try unicodeEscape(), to: &out)
            default: at -= 1; throw failure("invalid escape")
            }
        }
    }

    /// The scalar of a \u escape (after the `u`), joining a surrogate pair written as two escapes.
    private mutating func unicodeEscape() throws(Failure) -> UInt32 {
        let first = try hex4()
        guard (0xD800...0xDBFF).contains(first) else {
            return (0xDC00...0xDFFF).contains(first) ? 0xFFFD : first
        }
        // A high surrogate: a low one must follow as its own escape.
        guard at + 6 <= b.count, b[at] == UInt8(ascii: "\\"), b[at + 1] == UInt8(ascii: "u") else { return 0xFFFD }
        let save = at
        at += 2
        let second = try hex4()
        guard (0xDC00...0xDFFF).contains(second) else { at = save; return 0xFFFD }
        return 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
    }

    private mutating func hex4() throws(Failure) -> UInt32 {
        guard at + 4 <= b.count else { throw failure("unterminated \\u escape") }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let c = b[at]
            let d: UInt32
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = UInt32(c - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = UInt32(c - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = UInt32(c - UInt8(ascii: "A") + 10)
            default: throw failure("invalid \\u escape")
            }
            v = v << 4 | d
            at += 1
        }
        return v
    }

    private func appendUTF8(_ scalar: UInt32, to out: inout [UInt8]) {
        switch scalar {
        case 0..<0x80: out.append(UInt8(scalar))
        case 0x80..<0x800:
            out += [UInt8(0xC0 | scalar >> 6), UInt8(0x80 | scalar & 0x3F)]
        case 0x800..<0x10000:
            out += [UInt8(0xE0 | scalar >> 12), UInt8(0x80 | scalar >> 6 & 0x3F), UInt8(0x80 | scalar & 0x3F)]
        default:
            out += [UInt8(0xF0 | scalar >> 18), UInt8(0x80 | scalar >> 12 & 0x3F), UInt8(0x80 | scalar >> 6 & 0x3F),
                    UInt8(0x80 | scalar & 0x3F)]
        }
    }

    /// A number in JSON's grammar, converted by the standard library (correctly rounded).
    private mutating func number() throws(Failure) -> Double {
        let start = at
        if b[at] == UInt8(ascii: "-") { at += 1 }
        guard at < b.count, isDigit(b[at]) else { throw failure("invalid number") }
        if b[at] == UInt8(ascii: "0") {
            at += 1
            if at < b.count, isDigit(b[at]) { throw failure("leading zero in a number") }
        } else {
            while at < b.count, isDigit(b[at]) { at += 1 }
        }
        if at < b.count, b[at] == UInt8(ascii: ".") {
            at += 1
            guard at < b.count, isDigit(b[at]) else { throw failure("invalid number") }
            while at < b.count, isDigit(b[at]) { at += 1 }
        }
        if at < b.count, b[at] == UInt8(ascii: "e") || b[at] == UInt8(ascii: "E") {
            at += 1
            if at < b.count, b[at] == UInt8(ascii: "+") || b[at] == UInt8(ascii: "-") { at += 1 }
            guard at < b.count, isDigit(b[at]) else { throw failure("invalid number") }
            while at < b.count, isDigit(b[at]) { at += 1 }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: b[start..<at]), as: UTF8.self)
        guard let v = Double(text), v.isFinite else { at = start; throw failure("number out of range") }
        return v
    }

    private func isDigit(_ c: UInt8) -> Bool { c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") }
}
