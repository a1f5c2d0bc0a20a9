import Support

/// A JSON5 1.0.0 parser (https://spec.json5.org/) that keeps source locations.
///
/// Everything the spec allows is accepted: `//` and `/* */` comments, one trailing comma in arrays
/// and objects, ECMAScript 5.1 IdentifierNames as keys (Unicode letters and `\uXXXX` escapes
/// included, reserved words allowed), single- and double-quoted strings with line continuations and
/// all escapes, hexadecimal numbers, leading/trailing decimal points, explicit `+` signs, `Infinity`,
/// `NaN`, and the wider JSON5 whitespace set (NBSP, BOM, U+2028/U+2029, VT, FF and category Zs).
///
/// Decisions where the spec leaves room or Swift cannot follow it literally:
/// - A lone UTF-16 surrogate written as `\uD800`…`\uDFFF` (one not completed by a following
///   `\uDC00`…`\uDFFF` escape) becomes U+FFFD REPLACEMENT CHARACTER. The spec's grammar accepts
///   such strings, but a Swift `String` cannot hold a lone surrogate; replacing keeps every
///   spec-valid document parseable. A surrogate pair written as two escapes becomes one scalar.
/// - Duplicate keys are allowed; every member is kept in `JSON5Node.Kind.object` (and `plain`
///   keeps the last one, as JSON5 does).
/// - Nesting of arrays/objects is limited (512 levels by default) so hostile input cannot exhaust
///   memory or the stack; the parser itself is iterative.
/// - Numbers beyond the range of `Double` become ±infinity, as in JavaScript.
///
/// Locations are 1-based and counted in Unicode scalars. LF, CR, CRLF (as one break), U+2028 and
/// U+2029 each end a line.
public enum JSON5Parser {
    /// The default limit on nested arrays/objects.
    public static let defaultMaxDepth = 512

    /// The name of a document parsed without one (errors say "<input>:1:2").
    public static let unnamed = "<input>"

    /// Parses a whole JSON5 document. `file` is named in error messages and kept in every node.
    public static func parse(_ text: String, file: String = unnamed) throws(JSON5SyntaxError) -> JSON5Node {
        try parse(text, file: file, maxDepth: defaultMaxDepth)
    }

    /// Parses a whole JSON5 document, allowing at most `maxDepth` nested arrays/objects.
    public static func parse(_ text: String, file: String = unnamed, maxDepth: Int) throws(JSON5SyntaxError) -> JSON5Node {
        var parser = Parser(scalars: Array(text.unicodeScalars), file: file, maxDepth: maxDepth)
        return try parser.parseDocument()
    }
}

// MARK: - Implementation

extension JSON5Parser {
    /// An open array or object while the parser walks down (the parser keeps its own stack).
    fileprivate final class Frame {
        let isObject: Bool
        let start: SourceLocation
        let file: String
        var items: [JSON5Node] = []
        var members: [JSON5Node.Member] = []
        var key = ""
        var keyLocation = SourceLocation(line: 0, column: 0)

        init(isObject: Bool, start: SourceLocation, file: String) { self.isObject = isObject; self.start = start; self.file = file }

        var node: JSON5Node {
            JSON5Node(isObject ? .object(members) : .array(items), at: start, file: file)
        }
        var kindName: String { isObject ? "object" : "array" }
        var closer: Unicode.Scalar { isObject ? "}" : "]" }
    }

    fileprivate struct Parser {
        let s: [Unicode.Scalar]
        let file: String
        let maxDepth: Int
        var pos = 0
        var line = 1
        /// Index of the first scalar of the current line.
        var lineStart = 0

        init(scalars: [Unicode.Scalar], file: String, maxDepth: Int) {
            self.s = scalars; self.file = file; self.maxDepth = maxDepth
        }

        // MARK: Cursor

        var location: SourceLocation { SourceLocation(line: line, column: pos - lineStart + 1) }
        var current: Unicode.Scalar? { pos < s.count ? s[pos] : nil }
        func peek(_ offset: Int = 1) -> Unicode.Scalar? {
            let i = pos + offset
            return i < s.count ? s[i] : nil
        }

        /// Steps over one scalar, keeping line/column up to date.
        mutating func advance() {
            let c = s[pos].value
            pos += 1
            switch c {
            case 0x0A:
                // The LF of a CRLF pair does not start another line; the CR already did.
                if !(pos >= 2 && s[pos - 2].value == 0x0D) { line += 1 }
                lineStart = pos
            case 0x0D, 0x2028, 0x2029:
                line += 1
                lineStart = pos
            default:
                break
            }
        }

        func error(_ reason: String, at location: SourceLocation? = nil) -> JSON5SyntaxError {
            JSON5SyntaxError(file: file, location: location ?? self.location, reason: reason)
        }

        /// "'x'", "end of input", "space", or "U+0000" for characters that would not print usefully.
        var found: String {
            guard let c = current else { return "end of input" }
            return Parser.describe(c)
        }

        static func describe(_ c: Unicode.Scalar) -> String {
            switch c.value {
            case 0x0A, 0x0D, 0x2028, 0x2029: return "line break"
            case 0x09: return "tab"
            case 0x20: return "space"
            case 0x27: return "\"'\""
            default: break
            }
            switch c.properties.generalCategory {
            case .control, .format, .spaceSeparator, .lineSeparator, .paragraphSeparator,
                 .surrogate, .privateUse, .unassigned:
                return "U+" + hex4(c.value)
            default:
                return "'\(Character(c))'"
            }
        }

        static func hex4(_ v: UInt32) -> String {
            let h = String(v, radix: 16, uppercase: true)
            return String(repeating: "0", count: max(0, 4 - h.count)) + h
        }

        // MARK: Character classes

        static func isWhitespace(_ c: Unicode.Scalar) -> Bool {
            switch c.value {
            case 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0xA0, 0x2028, 0x2029, 0xFEFF: return true
            case 0..<0x80: return false
            default: return c.properties.generalCategory == .spaceSeparator
            }
        }

        static func isLineTerminator(_ c: Unicode.Scalar) -> Bool {
            switch c.value {
            case 0x0A, 0x0D, 0x2028, 0x2029: return true
            default: return false
            }
        }

        static func isDigit(_ c: Unicode.Scalar) -> Bool { c.value >= 0x30 && c.value <= 0x39 }

        static func hexValue(_ c: Unicode.Scalar) -> UInt32? {
            switch c.value {
            case 0x30...0x39: return c.value - 0x30
            case 0x41...0x46: return c.value - 0x41 + 10
            case 0x61...0x66: return c.value - 0x61 + 10
            default: return nil
            }
        }

        /// ES5.1 IdentifierStart without the escape: UnicodeLetter, `$`, `_`.
        static func isIdentifierStart(_ c: Unicode.Scalar) -> Bool {
            switch c.value {
            case 0x41...0x5A, 0x61...0x7A, 0x24, 0x5F: return true
            case 0..<0x80: return false
            default:
                switch c.properties.generalCategory {
                case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter,
                     .otherLetter, .letterNumber:
                    return true
                default:
                    return false
                }
            }
        }

        /// ES5.1 IdentifierPart without the escape: IdentifierStart, Mn, Mc, Nd, Pc, ZWNJ, ZWJ.
        static func isIdentifierPart(_ c: Unicode.Scalar) -> Bool {
            switch c.value {
            case 0x41...0x5A, 0x61...0x7A, 0x24, 0x5F, 0x30...0x39: return true
            case 0..<0x80: return false
            case 0x200C, 0x200D: return true
            default:
                switch c.properties.generalCategory {
                case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter,
                     .otherLetter, .letterNumber, .nonspacingMark, .spacingMark, .decimalNumber,
                     .connectorPunctuation:
                    return true
                default:
                    return false
                }
            }
        }

        // MARK: Trivia

        /// Skips whitespace and comments.
        mutating func skipTrivia() throws(JSON5SyntaxError) {
            while pos < s.count {
                let c = s[pos]
                if Parser.isWhitespace(c) { advance(); continue }
                guard c == "/" else { return }
                switch peek() {
                case "/":
                    advance(); advance()
                    while pos < s.count, !Parser.isLineTerminator(s[pos]) { advance() }
                case "*":
                    let start = location
                    advance(); advance()
                    while true {
                        guard pos < s.count else { throw error("unterminated comment", at: start) }
                        if s[pos] == "*", peek() == "/" { advance(); advance(); break }
                        advance()
                    }
                default:
                    throw error("unexpected '/' (comments start with '//' or '/*')")
                }
            }
        }

        // MARK: Document and containers

        mutating func parseDocument() throws(JSON5SyntaxError) -> JSON5Node {
            try skipTrivia()
            guard pos < s.count else { throw error("empty document: expected a JSON5 value") }
            let value = try parseValueTree()
            try skipTrivia()
            if let c = current {
                throw error("invalid character \(Parser.describe(c)) after value")
            }
            return value
        }

        func unterminated(_ frame: Frame) -> JSON5SyntaxError {
            error("unexpected end of input: \(frame.kindName) opened at \(frame.start) is not closed")
        }

        /// Parses one value (with everything nested in it) without recursion.
        /// On entry trivia has been skipped; on exit the cursor is just past the value.
        mutating func parseValueTree() throws(JSON5SyntaxError) -> JSON5Node {
            var stack: [Frame] = []

            nextValue: while true {
                let loc = location
                guard let c = current else {
                    if let top = stack.last { throw unterminated(top) }
                    throw error("unexpected end of input: expected a value")
                }
                var value: JSON5Node
                switch c {
                case "{", "[":
                    if stack.count >= maxDepth {
                        throw error("nesting too deep: more than \(maxDepth) nested arrays/objects")
                    }
                    let frame = Frame(isObject: c == "{", start: loc, file: file)
                    advance()
                    try skipTrivia()
                    if current == frame.closer {
                        advance()
                        value = frame.node
                    } else {
                        stack.append(frame)
                        if frame.isObject { try parseKeyAndColon(into: frame) }
                        continue nextValue
                    }
                case "\"", "'":
                    value = JSON5Node(.string(try parseString()), at: loc, file: file)
                default:
                    value = try parsePrimitive()
                }

                // Hand the finished value to its container; close containers as they end.
                while true {
                    guard let frame = stack.last else { return value }
                    if frame.isObject {
                        frame.members.append(JSON5Node.Member(key: frame.key, keyLocation: frame.keyLocation,
                                                              value: value))
                    } else {
                        frame.items.append(value)
                    }
                    try skipTrivia()
                    guard let c = current else { throw unterminated(frame) }
                    if c == "," {
                        advance()
                        try skipTrivia()
                        if current == frame.closer {      // the one allowed trailing comma
                            advance()
                            stack.removeLast()
                            value = frame.node
                            continue
                        }
                        if frame.isObject { try parseKeyAndColon(into: frame) }
                        continue nextValue
                    }
                    if c == frame.closer {
                        advance()
                        stack.removeLast()
                        value = frame.node
                        continue
                    }
                    throw error(frame.isObject
                        ? "expected ',' or '}' after object member, found \(found)"
                        : "expected ',' or ']' after array element, found \(found)")
                }
            }
        }

        /// Reads `key :` (trivia skipped before) and leaves the cursor at the value.
        mutating func parseKeyAndColon(into frame: Frame) throws(JSON5SyntaxError) {
            let loc = location
            guard let c = current else { throw unterminated(frame) }
            let key: String
            if c == "\"" || c == "'" {
                key = try parseString()
            } else if c == "\\" || Parser.isIdentifierStart(c) {
                key = try parseIdentifierName().name
            } else {
                throw error("expected a property name or '}', found \(found)")
            }
            try skipTrivia()
            guard current == ":" else {
                if current == nil { throw unterminated(frame) }
                throw error("expected ':' after property name, found \(found)")
            }
            advance()
            try skipTrivia()
            frame.key = key
            frame.keyLocation = loc
        }

        // MARK: Strings

        /// Parses a single- or double-quoted string; the cursor is on the opening quote.
        mutating func parseString() throws(JSON5SyntaxError) -> String {
            let start = location
            let quote = s[pos]
            advance()
            var out = String.UnicodeScalarView()
            while true {
                guard pos < s.count else { throw error("unterminated string", at: start) }
                let c = s[pos]
                if c == quote {
                    advance()
                    return String(out)
                }
                switch c.value {
                case 0x5C:
                    try parseEscape(into: &out, stringStart: start)
                case 0x0A, 0x0D:
                    throw error("unterminated string (a line break inside a string must be escaped, e.g. as \\n)")
                default:
                    out.append(c)
                    advance()
                }
            }
        }

        /// Parses an escape sequence; the cursor is on the backslash.
        mutating func parseEscape(into out: inout String.UnicodeScalarView,
                                  stringStart: SourceLocation) throws(JSON5SyntaxError) {
            let escapeLocation = location
            advance()
            guard pos < s.count else { throw error("unterminated string", at: stringStart) }
            let c = s[pos]
            switch c {
            case "b": out.append("\u{08}"); advance()
            case "f": out.append("\u{0C}"); advance()
            case "n": out.append("\n"); advance()
            case "r": out.append("\r"); advance()
            case "t": out.append("\t"); advance()
            case "v": out.append("\u{0B}"); advance()
            case "0":
                advance()
                if let d = current, Parser.isDigit(d) {
                    throw error("octal escapes are not allowed", at: escapeLocation)
                }
                out.append("\u{00}")
            case "1"..."7":
                throw error("octal escapes are not allowed", at: escapeLocation)
            case "8", "9":
                throw error("invalid escape '\\\(Character(c))'", at: escapeLocation)
            case "x":
                advance()
                let v = try hexDigits(2, escape: "\\x", stringStart: stringStart)
                out.append(Unicode.Scalar(UInt8(v)))
            case "u":
                advance()
                out.append(try unicodeEscapeValue(stringStart: stringStart))
            case "\r":
                advance()
                if current == "\n" { advance() }   // CRLF is one line continuation
            case "\n", "\u{2028}", "\u{2029}":
                advance()
            default:
                // ' " \ and every other NonEscapeCharacter stand for themselves.
                out.append(c)
                advance()
            }
        }

        /// Reads exactly `count` hex digits.
        mutating func hexDigits(_ count: Int, escape: String,
                                stringStart: SourceLocation?) throws(JSON5SyntaxError) -> UInt32 {
            var v: UInt32 = 0
            for _ in 0..<count {
                guard let c = current else {
                    if let stringStart { throw error("unterminated string", at: stringStart) }
                    throw error("invalid \(escape) escape: expected \(count) hex digits, found end of input")
                }
                guard let h = Parser.hexValue(c) else {
                    throw error("invalid \(escape) escape: expected \(count) hex digits, found \(found)")
                }
                v = v << 4 | h
                advance()
            }
            return v
        }

        /// After `\u`: reads four hex digits, joining a surrogate pair written as two escapes.
        /// A lone surrogate becomes U+FFFD.
        mutating func unicodeEscapeValue(stringStart: SourceLocation?) throws(JSON5SyntaxError) -> Unicode.Scalar {
            let v = try hexDigits(4, escape: "\\u", stringStart: stringStart)
            switch v {
            case 0xD800...0xDBFF:
                // Look ahead for `\uDC00`…`\uDFFF` without consuming anything else.
                if pos + 5 < s.count, s[pos] == "\\", s[pos + 1] == "u" {
                    var low: UInt32 = 0
                    var ok = true
                    for i in 2..<6 {
                        guard let h = Parser.hexValue(s[pos + i]) else { ok = false; break }
                        low = low << 4 | h
                    }
                    if ok, (0xDC00...0xDFFF).contains(low) {
                        for _ in 0..<6 { advance() }
                        return Unicode.Scalar(0x10000 + ((v - 0xD800) << 10) + (low - 0xDC00))!
                    }
                }
                return "\u{FFFD}"
            case 0xDC00...0xDFFF:
                return "\u{FFFD}"
            default:
                return Unicode.Scalar(v)!
            }
        }

        // MARK: Identifiers

        /// Reads an ES5.1 IdentifierName; the cursor is on an identifier start or a backslash.
        mutating func parseIdentifierName() throws(JSON5SyntaxError) -> (name: String, escaped: Bool) {
            var out = String.UnicodeScalarView()
            var escaped = false
            while let c = current {
                let first = out.isEmpty
                if c == "\\" {
                    let escapeLocation = location
                    advance()
                    guard current == "u" else {
                        throw error("invalid escape in identifier (only \\uXXXX is allowed)", at: escapeLocation)
                    }
                    advance()
                    let scalar = try unicodeEscapeValue(stringStart: nil)
                    guard first ? Parser.isIdentifierStart(scalar) : Parser.isIdentifierPart(scalar) else {
                        throw error("escape does not produce a valid identifier character", at: escapeLocation)
                    }
                    out.append(scalar)
                    escaped = true
                } else if first ? Parser.isIdentifierStart(c) : Parser.isIdentifierPart(c) {
                    out.append(c)
                    advance()
                } else {
                    break
                }
            }
            return (String(out), escaped)
        }

        // MARK: Numbers and literals

        /// Parses a number, `null`, `true` or `false` (or reports why the text is not a value).
        mutating func parsePrimitive() throws(JSON5SyntaxError) -> JSON5Node {
            let loc = location
            let c = s[pos]
            if c == "+" || c == "-" || c == "." || Parser.isDigit(c) {
                return JSON5Node(.number(try parseNumber()), at: loc, file: file)
            }
            if c == "\\" || Parser.isIdentifierStart(c) {
                let (word, escaped) = try parseIdentifierName()
                if !escaped {
                    switch word {
                    case "null": return JSON5Node(.null, at: loc, file: file)
                    case "true": return JSON5Node(.bool(true), at: loc, file: file)
                    case "false": return JSON5Node(.bool(false), at: loc, file: file)
                    case "Infinity": return JSON5Node(.number(.infinity), at: loc, file: file)
                    case "NaN": return JSON5Node(.number(.nan), at: loc, file: file)
                    case "undefined": throw error("'undefined' is not a JSON5 value", at: loc)
                    default: break
                    }
                }
                throw error("unexpected identifier '\(Parser.shorten(word))' (strings must be quoted)", at: loc)
            }
            throw error("expected a value, found \(found)")
        }

        static func shorten(_ word: String) -> String {
            word.unicodeScalars.count <= 40 ? word : String(String.UnicodeScalarView(word.unicodeScalars.prefix(40))) + "…"
        }

        /// Parses a JSON5Number; the cursor is on a sign, a digit or '.'.
        mutating func parseNumber() throws(JSON5SyntaxError) -> Double {
            let start = location
            var negative = false
            var sign = ""
            if let c = current, c == "+" || c == "-" {
                negative = c == "-"
                sign = String(Character(c))
                advance()
            }
            guard let first = current else {
                throw error("expected a number after '\(sign)', found end of input")
            }

            // Infinity / NaN after a sign.
            if first == "I" || first == "N" {
                let (word, escaped) = try parseIdentifierName()
                if !escaped, word == "Infinity" { return negative ? -.infinity : .infinity }
                if !escaped, word == "NaN" { return .nan }
                throw error("invalid number '\(sign)\(Parser.shorten(word))'", at: start)
            }

            // Hexadecimal integers.
            if first == "0", let x = peek(), x == "x" || x == "X" {
                advance(); advance()
                var digits = ""
                while let c = current, Parser.hexValue(c) != nil {
                    digits.unicodeScalars.append(c)
                    advance()
                }
                if digits.isEmpty {
                    throw error("expected a hex digit after '0\(Character(x))', found \(found)")
                }
                try checkNumberEnd()
                let magnitude = Parser.hexMagnitude(digits)
                return negative ? -magnitude : magnitude
            }

            // Decimal literals.
            var lexeme = negative ? "-" : ""
            var hasInteger = false
            if first == "0" {
                let zero = location
                advance()
                if let d = current, Parser.isDigit(d) {
                    throw error("leading zeros are not allowed", at: zero)
                }
                lexeme += "0"
                hasInteger = true
            } else if Parser.isDigit(first) {
                while let d = current, Parser.isDigit(d) { lexeme.unicodeScalars.append(d); advance() }
                hasInteger = true
            } else if first != "." {
                throw error("expected a number after '\(sign)', found \(found)")
            }
            if !hasInteger { lexeme += "0" }

            if current == "." {
                advance()
                var fraction = ""
                while let d = current, Parser.isDigit(d) { fraction.unicodeScalars.append(d); advance() }
                if fraction.isEmpty && !hasInteger {
                    throw error("expected a digit after '.', found \(found)")
                }
                lexeme += "." + (fraction.isEmpty ? "0" : fraction)
            }

            if let e = current, e == "e" || e == "E" {
                advance()
                lexeme += "e"
                if let sgn = current, sgn == "+" || sgn == "-" {
                    lexeme.unicodeScalars.append(sgn)
                    advance()
                }
                var digits = 0
                while let d = current, Parser.isDigit(d) { lexeme.unicodeScalars.append(d); advance(); digits += 1 }
                if digits == 0 {
                    throw error("expected a digit in the exponent, found \(found)")
                }
            }
            try checkNumberEnd()
            guard let value = Double(lexeme) else {
                throw error("invalid number", at: start)   // not reachable for a well-formed lexeme
            }
            return value
        }

        /// ES5: the character after a numeric literal must not be an IdentifierStart or a digit.
        func checkNumberEnd() throws(JSON5SyntaxError) {
            if let c = current, c == "\\" || Parser.isIdentifierPart(c) {
                throw error("invalid character \(Parser.describe(c)) after number")
            }
        }

        /// The value of a hex digit string, correctly rounded for numbers beyond 2^53.
        static func hexMagnitude(_ digits: String) -> Double {
            if digits.count <= 15, let v = UInt64(digits, radix: 16) { return Double(v) }
            // Let the C library round the long form; "0x…p0" is a hexadecimal floating literal.
            if let v = Double("0x" + digits + "p0") { return v }
            var v = 0.0
            for c in digits.unicodeScalars { v = v * 16 + Double(hexValue(c)!) }
            return v
        }
    }
}
