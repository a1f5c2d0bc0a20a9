import Support

/// A position in a source file, 1-based, counted in Unicode scalars (what an editor shows).
public struct SourceLocation: Sendable, Equatable, CustomStringConvertible {
    public let line: Int
    public let column: Int
    public init(line: Int, column: Int) { self.line = line; self.column = column }
    public var description: String { "\(line):\(column)" }
}

/// A parsed JSON5 value that remembers where it stood, so config errors can name file:line:col.
public struct JSON5Node: Sendable, Equatable {
    public indirect enum Kind: Sendable, Equatable {
        case null
        case bool(Bool)
        case number(Double)
        case string(String)
        case array([JSON5Node])
        /// Members in source order. Duplicate keys are kept here; `plain` keeps the last (as JSON5 does).
        case object([Member])
    }

    public struct Member: Sendable, Equatable {
        public let key: String
        public let keyLocation: SourceLocation
        public let value: JSON5Node
        public init(key: String, keyLocation: SourceLocation, value: JSON5Node) {
            self.key = key; self.keyLocation = keyLocation; self.value = value
        }
    }

    public let kind: Kind
    public let location: SourceLocation
    /// The file the value was read from: config drop-ins merge values of several files into one
    /// tree, and an error or `config show --origin` names the file each value came from.
    public let file: String

    public init(_ kind: Kind, at location: SourceLocation, file: String = "") {
        self.kind = kind; self.location = location; self.file = file
    }

    /// The value without locations.
    public var plain: JSONValue {
        switch kind {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .number(let n): return .number(n)
        case .string(let s): return .string(s)
        case .array(let items): return .array(items.map(\.plain))
        case .object(let members):
            var o: [String: JSONValue] = [:]
            for m in members { o[m.key] = m.value.plain }
            return .object(o)
        }
    }

    /// A short name of the value's type, for error messages ("expected a string, found a number").
    public var typeName: String {
        switch kind {
        case .null: return "null"
        case .bool: return "a boolean"
        case .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}

/// A JSON5 syntax error: where it is and what is wrong there.
public struct JSON5SyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
    public let file: String
    public let location: SourceLocation
    public let reason: String
    public init(file: String, location: SourceLocation, reason: String) {
        self.file = file; self.location = location; self.reason = reason
    }
    public var description: String { "\(file):\(location.line):\(location.column): \(reason)" }
}
