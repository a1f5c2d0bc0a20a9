@testable import Config
import Foundation
@testable import Kit
@testable import Support
import Testing

// Conformance tests for JSON5Parser against JSON5 1.0.0 (https://spec.json5.org/).

/// A snippet and the value it must parse to.
struct JSON5ValidCase: Sendable, CustomTestStringConvertible {
    let source: String
    let expected: JSONValue
    init(_ source: String, _ expected: JSONValue) { self.source = source; self.expected = expected }
    var testDescription: String { source.debugDescription }
}

/// A snippet that must be rejected, and a fragment of the reason it must give.
struct JSON5InvalidCase: Sendable, CustomTestStringConvertible {
    let source: String
    let reason: String
    init(_ source: String, _ reason: String) { self.source = source; self.reason = reason }
    var testDescription: String { source.debugDescription }
}

/// A snippet that must be rejected at a given line:column.
struct JSON5LocatedError: Sendable, CustomTestStringConvertible {
    let source: String
    let line: Int
    let column: Int
    let reason: String
    init(_ source: String, _ line: Int, _ column: Int, _ reason: String) {
        self.source = source; self.line = line; self.column = column; self.reason = reason
    }
    var testDescription: String { source.debugDescription }
}

private func plain(_ text: String) throws -> JSONValue { try JSON5Parser.parse(text).plain }

private func syntaxError(_ text: String, maxDepth: Int = JSON5Parser.defaultMaxDepth) -> JSON5SyntaxError? {
    do {
        _ = try JSON5Parser.parse(text, maxDepth: maxDepth)
        return nil
    } catch {
        return error
    }
}

@Suite("JSON5 parser")
struct JSON5Tests {

    // MARK: - Values

    static let primitives: [JSON5ValidCase] = [
        .init("null", nil),
        .init("true", true),
        .init("false", false),
        .init("\"\"", ""),
        .init("''", ""),
        .init("[]", []),
        .init("{}", [:]),
    ]

    @Test(arguments: primitives)
    func primitiveValues(_ c: JSON5ValidCase) throws {
        #expect(try plain(c.source) == c.expected)
    }

    static let numbers: [JSON5ValidCase] = [
        .init("0", 0), .init("1", 1), .init("+1", 1), .init("-1", -1), .init("123", 123),
        .init("-0.0", 0), .init("0.0", 0), .init("1.5", 1.5), .init("-1.5", -1.5),
        .init(".5", 0.5), .init("+.5", 0.5), .init("-.5", -0.5), .init("5.", 5), .init("-5.", -5), .init("+5.", 5),
        .init("1e3", 1000), .init("1E3", 1000), .init("1e+3", 1000), .init("1e-3", 0.001), .init("1E-3", 0.001),
        .init("1.5e2", 150), .init(".5e1", 5), .init("5.e1", 50), .init("5.E-1", 0.5), .init("0e0", 0),
        .init("0.5e+2", 50), .init("-1e2", -100), .init("+1e2", 100), .init("0e12", 0),
        .init("0x0", 0), .init("0xFF", 255), .init("0Xff", 255), .init("0xA", 10), .init("0xdEaDbEeF", 3_735_928_559),
        .init("-0x10", -16), .init("+0x10", 16), .init("0x00FF", 255),
        .init("0x1FFFFFFFFFFFFF", 9_007_199_254_740_991),
        .init("0xFFFFFFFFFFFFFFFFFFFF", .number(0x1p80)),
        .init("12345678901234567890", .number(1.234_567_890_123_456_789_0e19)),
        .init("1.7976931348623157e308", .number(1.7976931348623157e308)),
        .init("5e-324", .number(.leastNonzeroMagnitude)),
        .init("1e400", .number(.infinity)), .init("-1e400", .number(-.infinity)),
        .init("Infinity", .number(.infinity)), .init("+Infinity", .number(.infinity)),
        .init("-Infinity", .number(-.infinity)),
        .init("[1,-2,+3,.4,5.,0x6,-0x7,Infinity,-Infinity]", [1, -2, 3, 0.4, 5, 6, -7, .number(.infinity), .number(-.infinity)]),
    ]

    @Test(arguments: numbers)
    func numberValues(_ c: JSON5ValidCase) throws {
        #expect(try plain(c.source) == c.expected)
    }

    @Test(arguments: ["NaN", "+NaN", "-NaN", " NaN ", "[NaN]"])
    func notANumber(_ source: String) throws {
        let value = try plain(source)
        let n = value.doubleValue ?? value.arrayValue?.first?.doubleValue
        #expect(n?.isNaN == true)
    }

    @Test func negativeZeroKeepsItsSign() throws {
        #expect(try plain("-0").doubleValue?.sign == .minus)
        #expect(try plain("-0x0").doubleValue?.sign == .minus)
        #expect(try plain("+0").doubleValue?.sign == .plus)
    }

    static let strings: [JSON5ValidCase] = [
        .init("\"abc\"", "abc"),
        .init("'abc'", "abc"),
        .init("'a\"b'", "a\"b"),
        .init("\"a'b\"", "a'b"),
        .init("'\\''", "'"),
        .init("\"\\\"\"", "\""),
        .init("'\\\"'", "\""),
        .init("\"\\'\"", "'"),
        .init("'\\\\'", "\\"),
        .init("'\\b\\f\\n\\r\\t\\v'", "\u{08}\u{0C}\n\r\t\u{0B}"),
        .init("'\\0'", "\u{0}"),
        .init("'\\0a'", "\u{0}a"),
        .init("'a\\0'", "a\u{0}"),
        .init("'\\x41\\x7a\\xFF'", "Az\u{FF}"),
        .init("'\\u0041\\u00e9\\u4E2D'", "Aé中"),
        .init("'\\uD83D\\uDE00'", "😀"),
        .init("'\\ud83d\\ude00x'", "😀x"),
        .init("'\\a\\c\\d\\e\\g\\q\\z\\/\\ \\$'", "acdegqz/ $"),
        .init("'\\é\\😀'", "é😀"),
        .init("'a\\\nb'", "ab"),
        .init("'a\\\r\nb'", "ab"),
        .init("'a\\\rb'", "ab"),
        .init("'a\\\u{2028}b'", "ab"),
        .init("'a\\\u{2029}b'", "ab"),
        .init("'a\u{2028}b\u{2029}c'", "a\u{2028}b\u{2029}c"),
        .init("'tab\there'", "tab\there"),
        .init("'héllo wörld 😀 中文'", "héllo wörld 😀 中文"),
        .init("'e\u{301}'", "e\u{301}"),
        .init("'// not a comment /* nor this */'", "// not a comment /* nor this */"),
        .init("\"\\u0000\"", "\u{0}"),
        .init("'\\uFFFF'", "\u{FFFF}"),
    ]

    @Test(arguments: strings)
    func stringValues(_ c: JSON5ValidCase) throws {
        #expect(try plain(c.source) == c.expected)
    }

    /// Decision: a lone surrogate escape becomes U+FFFD (Swift strings cannot hold one).
    @Test(arguments: [
        JSON5ValidCase("'\\uD800'", "\u{FFFD}"),
        JSON5ValidCase("'\\uDC00'", "\u{FFFD}"),
        JSON5ValidCase("'\\uD83Dx'", "\u{FFFD}x"),
        JSON5ValidCase("'\\uD83D\\u0041'", "\u{FFFD}A"),
        JSON5ValidCase("'\\uDE00\\uD83D'", "\u{FFFD}\u{FFFD}"),
        JSON5ValidCase("'\\uD83D\\uD83D\\uDE00'", "\u{FFFD}😀"),
        JSON5ValidCase("'\\uD83D\\n'", "\u{FFFD}\n"),
    ])
    func loneSurrogatesBecomeReplacementCharacter(_ c: JSON5ValidCase) throws {
        #expect(try plain(c.source) == c.expected)
    }

    // MARK: - Arrays and objects

    static let containers: [JSON5ValidCase] = [
        .init("[1]", [1]),
        .init("[1,]", [1]),
        .init("[1,2,]", [1, 2]),
        .init("[ 1 , 2 , ]", [1, 2]),
        .init("[[]]", [[]]),
        .init("[[],[],]", [[], []]),
        .init("[[[1,],],]", [[[1]]]),
        .init("[null,true,'x',{},[]]", [nil, true, "x", [:], []]),
        .init("{a:1}", ["a": 1]),
        .init("{a:1,}", ["a": 1]),
        .init("{a:1,b:2,}", ["a": 1, "b": 2]),
        .init("{'a':1}", ["a": 1]),
        .init("{\"a\":1}", ["a": 1]),
        .init("{'':1}", ["": 1]),
        .init("{'a b':1, \"c-d\":2}", ["a b": 1, "c-d": 2]),
        .init("{ a : 1 , b : [ 2 , ] , }", ["a": 1, "b": [2]]),
        .init("{a:{b:{c:{}}}}", ["a": ["b": ["c": [:]]]]),
        .init("{a:[{b:[]},],}", ["a": [["b": []]]]),
        .init("{a:1,a:2}", ["a": 2]),
    ]

    @Test(arguments: containers)
    func containerValues(_ c: JSON5ValidCase) throws {
        #expect(try plain(c.source) == c.expected)
    }

    // MARK: - Property names

    static let keys: [JSON5ValidCase] = [
        .init("{$:1,_:2,$_a1:3,_$:4,a$b_c9:5}", ["$": 1, "_": 2, "$_a1": 3, "_$": 4, "a$b_c9": 5]),
        .init("{null:1,true:2,false:3}", ["null": 1, "true": 2, "false": 3]),
        .init("{if:1,var:2,function:3,class:4,return:5,new:6,delete:7}",
              ["if": 1, "var": 2, "function": 3, "class": 4, "return": 5, "new": 6, "delete": 7]),
        .init("{Infinity:1,NaN:2,undefined:3}", ["Infinity": 1, "NaN": 2, "undefined": 3]),
        .init("{ünïcödé:1}", ["ünïcödé": 1]),                 // Ll
        .init("{Ärger:1}", ["Ärger": 1]),                     // Lu
        .init("{ǅx:1}", ["ǅx": 1]),                           // Lt
        .init("{ʰa:1}", ["ʰa": 1]),                           // Lm
        .init("{中文:1, π:2}", ["中文": 1, "π": 2]),           // Lo, Ll
        .init("{Ⅻ:1}", ["Ⅻ": 1]),                             // Nl
        .init("{𝑥:1}", ["𝑥": 1]),                             // astral Ll
        .init("{a\u{301}:1}", ["a\u{301}": 1]),               // Mn
        .init("{a\u{903}:1}", ["a\u{903}": 1]),               // Mc
        .init("{a٣:1}", ["a٣": 1]),                           // Nd (Arabic-Indic three)
        .init("{a‿b:1}", ["a‿b": 1]),                         // Pc (undertie)
        .init("{a\u{200C}b:1, a\u{200D}c:2}", ["a\u{200C}b": 1, "a\u{200D}c": 2]), // ZWNJ, ZWJ
        .init("{\\u0061b:1}", ["ab": 1]),
        .init("{a\\u0062:1}", ["ab": 1]),
        .init("{ab\\u0031:1}", ["ab1": 1]),
        .init("{\\u0024:1, \\u005f:2}", ["$": 1, "_": 2]),
        .init("{\\u00e9t\\u00E9:1}", ["été": 1]),
        .init("{\\uD835\\uDC65:1}", ["𝑥": 1]),
        .init("{a\\u200Cb:1}", ["a\u{200C}b": 1]),
    ]

    @Test(arguments: keys)
    func propertyNames(_ c: JSON5ValidCase) throws {
        #expect(try plain(c.source) == c.expected)
    }

    @Test func duplicateKeysAreKeptInTheNode() throws {
        let node = try JSON5Parser.parse("{a:1, b:2, a:3}")
        guard case .object(let members) = node.kind else {
            Issue.record("expected an object"); return
        }
        #expect(members.map(\.key) == ["a", "b", "a"])
        #expect(members.map(\.value.plain) == [1, 2, 3])
        #expect(node.plain == ["a": 3, "b": 2])
    }

    // MARK: - Comments and whitespace

    static let trivia: [JSON5ValidCase] = [
        .init("// comment\n1", 1),
        .init("/* comment */ 1", 1),
        .init("1 // comment", 1),
        .init("1 /* comment */", 1),
        .init("1//comment without newline", 1),
        .init("/**/1/**/", 1),
        .init("/***/1", 1),
        .init("/* * / ** */ 1", 1),
        .init("/* // */ 1", 1),
        .init("// /* \n 1", 1),
        .init("/* multi\n line\r\n comment */ 1", 1),
        .init("//a\r1", 1),
        .init("//a\u{2028}1", 1),
        .init("//a\u{2029}1", 1),
        .init("[1 /* c */, /* c */ 2 // c\n, // c\n]", [1, 2]),
        .init("{/*c*/a/*c*/:/*c*/1/*c*/,/*c*/}", ["a": 1]),
        .init("{//c\na//c\n://c\n1//c\n,//c\n}", ["a": 1]),
        .init("\t\n\r\u{0B}\u{0C} 1 \t\n\r\u{0B}\u{0C}", 1),
        .init("\u{A0}\u{FEFF}\u{2028}\u{2029}1\u{A0}\u{FEFF}\u{2028}\u{2029}", 1),
        .init("\u{FEFF}{a:1}", ["a": 1]),
        .init("\u{1680}\u{2000}\u{2001}\u{2005}\u{200A}\u{202F}\u{205F}\u{3000}1", 1),   // Zs
        .init("[\u{3000}1\u{A0},\u{2003}2\u{FEFF}]", [1, 2]),
        .init("{\u{A0}a\u{2028}:\u{2029}1}", ["a": 1]),
    ]

    @Test(arguments: trivia)
    func commentsAndWhitespace(_ c: JSON5ValidCase) throws {
        #expect(try plain(c.source) == c.expected)
    }

    // MARK: - Rejected input

    static let invalid: [JSON5InvalidCase] = [
        // Empty documents.
        .init("", "empty document"),
        .init("   \n\t", "empty document"),
        .init("// only a comment", "empty document"),
        .init("/* only */ /* comments */", "empty document"),
        .init("\u{FEFF}", "empty document"),
        // Identifiers that are not values.
        .init("undefined", "'undefined' is not a JSON5 value"),
        .init("[undefined]", "'undefined' is not a JSON5 value"),
        .init("foo", "unexpected identifier 'foo'"),
        .init("{a:foo}", "strings must be quoted"),
        .init("NULL", "unexpected identifier 'NULL'"),
        .init("True", "unexpected identifier 'True'"),
        .init("nul", "unexpected identifier 'nul'"),
        .init("nullx", "unexpected identifier 'nullx'"),
        .init("infinity", "unexpected identifier 'infinity'"),
        .init("nan", "unexpected identifier 'nan'"),
        .init("\\u006eull", "unexpected identifier 'null'"),
        .init("-null", "expected a number after '-'"),
        .init("+undefined", "expected a number after '+'"),
        .init("-Infinityx", "invalid number '-Infinityx'"),
        .init("-Inf", "invalid number '-Inf'"),
        .init("+nan", "expected a number after '+'"),
        // Commas.
        .init("[,]", "expected a value, found ','"),
        .init("{,}", "expected a property name or '}', found ','"),
        .init("[1,,]", "expected a value, found ','"),
        .init("[1,,2]", "expected a value, found ','"),
        .init("{a:1,,}", "expected a property name or '}', found ','"),
        .init("[1 2]", "expected ',' or ']' after array element, found '2'"),
        .init("{a:1 b:2}", "expected ',' or '}' after object member, found 'b'"),
        .init("[1,]]", "invalid character ']' after value"),
        .init("{a:1,}}", "invalid character '}' after value"),
        .init("[1}", "expected ',' or ']' after array element, found '}'"),
        .init("{a:1]", "expected ',' or '}' after object member, found ']'"),
        // Object members.
        .init("{a 1}", "expected ':' after property name, found '1'"),
        .init("{a}", "expected ':' after property name, found '}'"),
        .init("{a:}", "expected a value, found '}'"),
        .init("{:1}", "expected a property name or '}', found ':'"),
        .init("{1:1}", "expected a property name or '}', found '1'"),
        .init("{-a:1}", "expected a property name or '}', found '-'"),
        .init("{'a' 1}", "expected ':' after property name"),
        .init("{a-b:1}", "expected ':' after property name, found '-'"),
        .init("{\\u0030a:1}", "escape does not produce a valid identifier character"),
        .init("{a\\u0020b:1}", "escape does not produce a valid identifier character"),
        .init("{a\\u002d:1}", "escape does not produce a valid identifier character"),
        .init("{\\x61:1}", "only \\uXXXX is allowed"),
        .init("{a\\u00:1}", "expected 4 hex digits"),
        .init("{\\uD800:1}", "escape does not produce a valid identifier character"),
        .init("{a\u{2603}:1}", "expected ':' after property name"),
        // Unterminated things.
        .init("'abc", "unterminated string"),
        .init("\"abc", "unterminated string"),
        .init("'abc\"", "unterminated string"),
        .init("'abc\ndef'", "unterminated string"),
        .init("\"a\rb\"", "unterminated string"),
        .init("'a\\", "unterminated string"),
        .init("'a\\u12", "unterminated string"),
        .init("/* never closed", "unterminated comment"),
        .init("1 /* never closed *", "unterminated comment"),
        .init("[", "array opened at 1:1 is not closed"),
        .init("[1", "array opened at 1:1 is not closed"),
        .init("[1,", "array opened at 1:1 is not closed"),
        .init("{", "object opened at 1:1 is not closed"),
        .init("{a", "object opened at 1:1 is not closed"),
        .init("{a:", "object opened at 1:1 is not closed"),
        .init("{a:1", "object opened at 1:1 is not closed"),
        .init("{a:1,", "object opened at 1:1 is not closed"),
        .init("[{a:[", "array opened at 1:5 is not closed"),
        // Trailing garbage.
        .init("1 2", "invalid character '2' after value"),
        .init("{} x", "invalid character 'x' after value"),
        .init("'a' 'b'", "invalid character \"'\" after value"),
        .init("null,", "invalid character ',' after value"),
        .init("{a:1}/", "unexpected '/'"),
        .init("/ 1", "unexpected '/'"),
        .init("1 / 2", "unexpected '/'"),
        // Numbers.
        .init("01", "leading zeros are not allowed"),
        .init("00", "leading zeros are not allowed"),
        .init("-01", "leading zeros are not allowed"),
        .init("+00.5", "leading zeros are not allowed"),
        .init("0x", "expected a hex digit after '0x'"),
        .init("0X", "expected a hex digit after '0X'"),
        .init("-0x", "expected a hex digit after '0x'"),
        .init("0xg", "expected a hex digit after '0x', found 'g'"),
        .init("0x1g", "invalid character 'g' after number"),
        .init("0x1.5", "invalid character '.' after value"),
        .init(".", "expected a digit after '.'"),
        .init("-.", "expected a digit after '.'"),
        .init(".e1", "expected a digit after '.', found 'e'"),
        .init("+", "expected a number after '+', found end of input"),
        .init("-", "expected a number after '-', found end of input"),
        .init("- 1", "expected a number after '-', found space"),
        .init("+-1", "expected a number after '+', found '-'"),
        .init("--1", "expected a number after '-', found '-'"),
        .init("1e", "expected a digit in the exponent"),
        .init("1e+", "expected a digit in the exponent"),
        .init("1E-", "expected a digit in the exponent"),
        .init("1.e", "expected a digit in the exponent"),
        .init("1ex", "expected a digit in the exponent, found 'x'"),
        .init("1a", "invalid character 'a' after number"),
        .init("1.5x", "invalid character 'x' after number"),
        .init("1_000", "invalid character '_' after number"),
        .init("1e5e", "invalid character 'e' after number"),
        .init("1..2", "invalid character '.' after value"),
        .init("1.2.3", "invalid character '.' after value"),
        .init("[Infinity.5]", "expected ',' or ']' after array element, found '.'"),
        // Escapes.
        .init("'\\01'", "octal escapes are not allowed"),
        .init("'\\00'", "octal escapes are not allowed"),
        .init("'\\1'", "octal escapes are not allowed"),
        .init("'\\7'", "octal escapes are not allowed"),
        .init("'\\8'", "invalid escape '\\8'"),
        .init("'\\9'", "invalid escape '\\9'"),
        .init("'\\x4'", "invalid \\x escape: expected 2 hex digits, found \"'\""),
        .init("'\\xZZ'", "invalid \\x escape: expected 2 hex digits, found 'Z'"),
        .init("'\\x'", "invalid \\x escape"),
        .init("'\\u123'", "invalid \\u escape: expected 4 hex digits"),
        .init("'\\u12G4'", "invalid \\u escape: expected 4 hex digits, found 'G'"),
        .init("'\\u{41}'", "invalid \\u escape"),
        // Other characters where a value belongs.
        .init("[\u{0}]", "expected a value, found U+0000"),
        .init("#", "expected a value, found '#'"),
        .init("]", "expected a value, found ']'"),
        .init("}", "expected a value, found '}'"),
        .init("`abc`", "expected a value, found '`'"),
        .init("\u{2603}", "expected a value, found '☃'"),
        .init("\u{200B}1", "expected a value, found U+200B"),   // ZWSP is Cf, not whitespace
    ]

    @Test(arguments: invalid)
    func rejectsInvalidInput(_ c: JSON5InvalidCase) {
        let error = syntaxError(c.source)
        #expect(error != nil, "should have been rejected")
        if let error {
            #expect(error.reason.contains(c.reason), "reason was: \(error.reason)")
        }
    }

    // MARK: - Error locations

    static let located: [JSON5LocatedError] = [
        .init("{\n  a: 1,\n  b: 01,\n}", 3, 6, "leading zeros are not allowed"),
        .init("{\n  a: 'abc\n}", 2, 10, "unterminated string"),
        .init("{\r\n  a: 1\r\n  b: 2\r\n}", 3, 3, "expected ',' or '}' after object member"),
        .init("{\r  a: 1\r  b: 2\r}", 3, 3, "expected ',' or '}' after object member"),
        .init("[1,\u{2028}2,\u{2029}x]", 3, 1, "unexpected identifier 'x'"),
        .init("{}\n\n  x", 3, 3, "invalid character 'x' after value"),
        .init("['😀', x]", 1, 7, "unexpected identifier 'x'"),
        .init("['e\u{301}\u{301}', ?]", 1, 9, "expected a value, found '?'"),
        .init("// header\n1 /* abc", 2, 3, "unterminated comment"),
        .init("[\n 'abc", 2, 2, "unterminated string"),
        .init("[1,\n2", 2, 2, "array opened at 1:1 is not closed"),
        .init("{\n\ta: 'x\\1'\n}", 2, 7, "octal escapes are not allowed"),
        .init("{\n  a:1,\n  ,\n}", 3, 3, "expected a property name or '}', found ','"),
        .init("{\n  a 1\n}", 2, 5, "expected ':' after property name"),
        .init("/* a\n b\r\n c */ [\n\tundefined]", 4, 2, "'undefined' is not a JSON5 value"),
        .init("'a\\\nb' x", 2, 4, "invalid character 'x' after value"),
        .init("'a\\\r\nb' x", 2, 4, "invalid character 'x' after value"),
        .init("'a\u{2028}b' x", 2, 4, "invalid character 'x' after value"),
        .init("\u{FEFF}\u{A0}x", 1, 3, "unexpected identifier 'x'"),
        .init("[1, 2]\n// done\n]", 3, 1, "invalid character ']' after value"),
    ]

    @Test(arguments: located)
    func errorLocations(_ c: JSON5LocatedError) {
        let error = syntaxError(c.source)
        #expect(error?.location == SourceLocation(line: c.line, column: c.column))
        #expect(error?.reason.contains(c.reason) == true, "reason was: \(error?.reason ?? "none")")
    }

    @Test func errorDescriptionNamesFileLineAndColumn() {
        do {
            _ = try JSON5Parser.parse("{\n  port: 80x\n}", file: "/etc/openclaw/node.json5")
            Issue.record("should have thrown")
        } catch {
            #expect(error.file == "/etc/openclaw/node.json5")
            #expect(error.location == SourceLocation(line: 2, column: 11))
            #expect(error.description == "/etc/openclaw/node.json5:2:11: invalid character 'x' after number")
        }
        #expect(syntaxError("x")?.file == "<input>")
    }

    // MARK: - Node locations

    @Test func nodesRememberWhereTheyStood() throws {
        let text = """
        // config
        {
          name: 'node-1',
          "list": [1, -2.5, {x: null}],
          élan: true,
        }
        """
        let root = try JSON5Parser.parse(text)
        #expect(root.location == SourceLocation(line: 2, column: 1))
        guard case .object(let members) = root.kind else { Issue.record("not an object"); return }
        #expect(members.map(\.key) == ["name", "list", "élan"])
        #expect(members.map(\.keyLocation) == [
            SourceLocation(line: 3, column: 3), SourceLocation(line: 4, column: 3), SourceLocation(line: 5, column: 3),
        ])
        #expect(members[0].value.location == SourceLocation(line: 3, column: 9))
        #expect(members[2].value.location == SourceLocation(line: 5, column: 9))
        guard case .array(let items) = members[1].value.kind else { Issue.record("not an array"); return }
        #expect(members[1].value.location == SourceLocation(line: 4, column: 11))
        #expect(items.map(\.location) == [
            SourceLocation(line: 4, column: 12), SourceLocation(line: 4, column: 15), SourceLocation(line: 4, column: 21),
        ])
        guard case .object(let inner) = items[2].kind else { Issue.record("not an object"); return }
        #expect(inner[0].keyLocation == SourceLocation(line: 4, column: 22))
        #expect(inner[0].value.location == SourceLocation(line: 4, column: 25))
    }

    @Test func locationsCountScalarsAndAllLineTerminators() throws {
        let root = try JSON5Parser.parse("[\r\n'😀e\u{301}', 1,\r2,\u{2028}3,\n\r4]")
        guard case .array(let items) = root.kind else { Issue.record("not an array"); return }
        #expect(items.map(\.location) == [
            SourceLocation(line: 2, column: 1), SourceLocation(line: 2, column: 8),
            SourceLocation(line: 3, column: 1), SourceLocation(line: 4, column: 1),
            SourceLocation(line: 6, column: 1),
        ])
    }

    // MARK: - Nesting limit

    @Test func nestingLimit() throws {
        let ok = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
        #expect(throws: Never.self) { try JSON5Parser.parse(ok) }

        let deep = String(repeating: "[", count: 513) + String(repeating: "]", count: 513)
        let error = syntaxError(deep)
        #expect(error?.reason.contains("nesting too deep") == true)
        #expect(error?.location == SourceLocation(line: 1, column: 513))

        let objects = String(repeating: "{a:", count: 600) + "1" + String(repeating: "}", count: 600)
        #expect(syntaxError(objects)?.reason.contains("nesting too deep") == true)

        #expect(syntaxError("[[[1]]]", maxDepth: 3) == nil)
        #expect(syntaxError("[[[[]]]]", maxDepth: 3)?.location == SourceLocation(line: 1, column: 4))

        // Far beyond the limit must fail cleanly too (no stack overflow).
        let hostile = String(repeating: "[", count: 200_000)
        #expect(syntaxError(hostile)?.reason.contains("nesting too deep") == true)
        #expect(syntaxError(String(repeating: "{a:", count: 100_000)) != nil)
    }

    @Test func deepNestingWithinALargeLimitParses() throws {
        // The parser keeps its own stack, so a generous limit does not risk the thread's stack.
        let n = 2_000
        let text = String(repeating: "[", count: n) + "1" + String(repeating: "]", count: n)
        var node = try JSON5Parser.parse(text, maxDepth: n)
        var depth = 0
        while case .array(let items) = node.kind { depth += 1; node = items[0] }
        #expect(depth == n)
        #expect(node.plain == 1)
    }

    // MARK: - Documents

    @Test func realisticConfigDocument() throws {
        let text = """
        // openclaw-node configuration
        {
          /* Where the gateway lives. */
          gateway: {
            url: 'wss://gateway.example.com:18789/ws',
            token: "s3cr\\u0065t",   // escaped on purpose
            reconnect: { initialDelay: .5, maxDelay: 30., factor: 2e0, },
          },

          node: {
            displayName: 'Küchen-PC "main"',
            id: null,
            tags: ['linux', 'desktop', ],
          },

          capabilities: {
            camera: { enabled: false },
            screen: { enabled: true, maxFps: +15, },
            location: { enabled: true, accuracyMeters: 0x64 },
          },

          limits: {
            maxPayloadBytes: 1e6,
            timeoutSeconds: Infinity,
          },

          motd: 'Welcome \\
        home!',
        }

        """
        let value = try plain(text)
        let expected: JSONValue = [
            "gateway": [
                "url": "wss://gateway.example.com:18789/ws",
                "token": "s3cret",
                "reconnect": ["initialDelay": 0.5, "maxDelay": 30, "factor": 2],
            ],
            "node": [
                "displayName": "Küchen-PC \"main\"",
                "id": nil,
                "tags": ["linux", "desktop"],
            ],
            "capabilities": [
                "camera": ["enabled": false],
                "screen": ["enabled": true, "maxFps": 15],
                "location": ["enabled": true, "accuracyMeters": 100],
            ],
            "limits": ["maxPayloadBytes": 1_000_000, "timeoutSeconds": .number(.infinity)],
            "motd": "Welcome home!",
        ]
        #expect(value == expected)
    }

    @Test func specExampleDocument() throws {
        // The example from the JSON5 home page / spec.
        let text = """
        {
          // comments
          unquoted: 'and you can quote me on that',
          singleQuotes: 'I can use "double quotes" here',
          lineBreaks: "Look, Mom! \\
        No \\\\n's!",
          hexadecimal: 0xdecaf,
          leadingDecimalPoint: .8675309, andTrailing: 8675309.,
          positiveSign: +1,
          trailingComma: 'in objects', andIn: ['arrays',],
          "backwardsCompatible": "with JSON",
        }
        """
        #expect(try plain(text) == [
            "unquoted": "and you can quote me on that",
            "singleQuotes": "I can use \"double quotes\" here",
            "lineBreaks": "Look, Mom! No \\n's!",
            "hexadecimal": 912_559,
            "leadingDecimalPoint": 0.8675309, "andTrailing": 8_675_309,
            "positiveSign": 1,
            "trailingComma": "in objects", "andIn": ["arrays"],
            "backwardsCompatible": "with JSON",
        ])
    }

    @Test(arguments: [
        "{\"a\": [1, 2.5, -3e-2, true, false, null, \"x\\ny\\u00e9\"], \"b\": {}}",
        "[{\"k\": \"v\"}, [], [[]], \"\\/\\b\\f\\n\\r\\t\\\"\\\\\"]",
        "  {\"nested\": {\"deeper\": {\"deepest\": [0, -0, 1E+2]}}}  ",
    ])
    func plainJSONIsJSON5(_ text: String) throws {
        // Every JSON document is a JSON5 document with the same value.
        let viaJSON = try #require(JSONValue.parse(text))
        #expect(try plain(text) == viaJSON)
    }

    @Test func largeDocumentParsesQuickly() throws {
        var text = "// generated\n{\n  items: [\n"
        var i = 0
        while text.utf8.count < 1_000_000 {
            text += "    { id: \(i), name: 'item \(i) é😀', value: \(Double(i) / 8), hex: 0x\(String(i, radix: 16)), on: \(i % 2 == 0), /* c */ },\n"
            i += 1
        }
        text += "  ],\n}\n"
        let clock = ContinuousClock()
        var parsed: JSON5Node?
        let elapsed = try clock.measure { parsed = try JSON5Parser.parse(text) }
        let items = try #require(parsed?.plain["items"]?.arrayValue)
        #expect(items.count == i)
        #expect(items.last?["name"] == .string("item \(i - 1) é😀"))
        // A parse that copies or rescans what it read (quadratic) takes minutes on 1 MB; a linear
        // one well under a second in a debug build. The bound tells those apart on a busy machine;
        // how fast it is, is scripts/bench's to say.
        #expect(elapsed < .seconds(20), "parsing 1 MB took \(elapsed)")
    }
}
