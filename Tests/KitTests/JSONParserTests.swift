import Foundation
import Support
import Testing

/// Support's JSON parser against Foundation's JSONDecoder (the parser it replaced) on the same
/// texts, valid and invalid, and its own limits; plus Base64 against Foundation's.
@Suite struct JSONParserTests {
    /// What Foundation makes of the text (nil: it refuses it).
    private func foundation(_ text: String) -> JSONValue? {
        try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
    }

    @Test(arguments: [
        "{}", "[]", "null", "true", "false", "0", "-0", "12", "-3.25", "1e3", "1E-3", "2.5e+10", "123456789012345678",
        "\"\"", "\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\"", "\"\\u00e9\\u20AC\"", "\"\\ud83d\\ude00\"", "\"é€😀\"",
        " { \"a\" : [ 1 , 2 , { \"b\" : null } ] , \"c\" : \"d\" } ", "[[[[[]]]]]",
        "{\"type\":\"req\",\"id\":\"1\",\"method\":\"node.invoke.request\",\"params\":{\"paramsJSON\":\"{\\\"x\\\":1}\"}}",
        "\n\t[1]\r\n", "1.5e308", "5e-324", "-1.7976931348623157e308",
    ])
    func acceptsWhatFoundationAccepts(text: String) throws {
        let ours = try JSONParser.parse(text)
        #expect(ours == foundation(text), "\(text)")
    }

    @Test(arguments: [
        "", " ", "{", "}", "[1 2]", "{\"a\" 1}", "{a:1}", "'x'", "01", "-", "1.", ".5", "1e", "+1",
        "tru", "nul", "[1]]", "{} {}", "\"abc", "\"a\nb\"", "\"\\x\"", "\"\\u12\"", "\"\\u12G4\"", "NaN", "Infinity",
        "[1,2", "{\"a\":}", "\u{0}",
    ])
    func refusesWhatFoundationRefuses(text: String) {
        #expect(throws: JSONParser.Failure.self, "\(text)") { try JSONParser.parse(text) }
        #expect(foundation(text) == nil, "Foundation accepts \(text)")
    }

    /// Nesting past 512 is refused (a hostile frame cannot exhaust the stack); 512 is fine.
    @Test func depthLimit() throws {
        let ok = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
        #expect(try JSONParser.parse(ok).arrayValue != nil)
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(deep) }
        let deepObjects = String(repeating: "{\"a\":", count: 600) + "1" + String(repeating: "}", count: 600)
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(deepObjects) }
    }

    /// Where it is kinder than Foundation: an unpaired surrogate becomes U+FFFD, the frame survives.
    @Test func unpairedSurrogatesBecomeReplacementCharacters() throws {
        #expect(try JSONParser.parse("\"a\\ud800b\"") == .string("a\u{FFFD}b"))
        #expect(try JSONParser.parse("\"\\udc00\"") == .string("\u{FFFD}"))
        #expect(try JSONParser.parse("\"\\ud800\\u0041\"") == .string("\u{FFFD}A"))
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse("1e400") }
    }

    /// Where it follows RFC 8259 and JavaScript (the gateway's JSON.parse) rather than
    /// JSONDecoder: no trailing commas, and a repeated key keeps its last value.
    @Test func strictWhereFoundationIsLenient() throws {
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse("[1,]") }
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse("{\"a\":1,}") }
        #expect(try JSONParser.parse("{\"a\":1,\"a\":2}") == ["a": 2])
    }

    /// Failures say where.
    @Test func failuresSayWhere() {
        do { _ = try JSONParser.parse("[1, x]"); Issue.record("parsed") } catch {
            #expect(error.offset == 4 && error.reason == "unexpected character", "\(error)")
        }
    }

    /// What the writer writes, the parser reads back unchanged (a large payload included).
    @Test func roundTripsTheWriter() throws {
        let big = String(repeating: "abc\"\\\u{1}é😀", count: 20_000)
        let v: JSONValue = ["s": .string(big), "n": [1, -2.5, 1e21, 0.1], "o": ["k": nil, "t": true], "e": [:], "a": []]
        #expect(try JSONParser.parse(v.jsonBytes) == v)
        #expect(try JSONParser.parse(v.jsonString(pretty: true)) == v)
    }

    @Test(arguments: [0, 1, 2, 3, 4, 5, 57, 58, 59, 1000])
    func base64MatchesFoundation(length: Int) {
        let bytes = (0..<length).map { UInt8(($0 * 37 + 11) % 256) }
        let ours = Base64.encode(bytes)
        #expect(ours == Data(bytes).base64EncodedString())
        #expect(Base64.decode(ours) == bytes)
        let urlSafe = Base64.encodeURLSafe(bytes)
        #expect(!urlSafe.contains("=") && !urlSafe.contains("+") && !urlSafe.contains("/"))
        #expect(Base64.decode(urlSafe) == bytes)
    }

    @Test func base64RefusesWhatIsNotBase64() {
        for bad in ["a", "ab=c", "abc*", "a===", "ab==c", "====", "QQ===", "QUJD=QQ==", "QU\u{e9}D", " QQ=="] {
            #expect(Base64.decode(bad) == nil, "\(bad)")
        }
        #expect(Base64.decode("") == [] && Base64.decode("QQ") == [65] && Base64.decode("QUI") == [65, 66])
        // Canonical: the unused low bits of the last character are zero.
        func canonical(_ s: String) -> [UInt8]? { var t = s; return t.withUTF8 { Base64.decode(utf8: $0, canonical: true) } }
        #expect(canonical("QQ==") == [65] && canonical("QR==") == nil && Base64.decode("QR==") == [65])
        #expect(canonical("QUI=") == [65, 66] && canonical("QUJ=") == nil)
    }

    /// Every byte value through both alphabets at sizes around 16 MiB's, against Foundation.
    @Test func base64OfAFileMatchesFoundation() {
        var rng = SystemRandomNumberGenerator()
        let bytes = (0..<(1 << 20) + 2).map { _ in UInt8.random(in: 0...255, using: &rng) }
        let ours = Base64.encode(bytes)
        #expect(ours == Data(bytes).base64EncodedString())
        #expect(Base64.decode(ours) == bytes && Base64.decode(Base64.encodeURLSafe(bytes)) == bytes)
    }
}
