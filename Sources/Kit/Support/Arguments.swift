/// Minimal argument reader: positionals plus `--flag` and `--option VALUE` / `--option=VALUE`.
public struct Arguments: Sendable {
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public let description: String
        public init(description: String) { self.description = description }
    }

    public private(set) var positionals: [String] = []
    private var options: [String: String] = [:]
    private var flags: Set<String> = []

    /// `valued` lists options that take a value; anything else starting with `--` is a flag.
    /// `ignoringUnknown`: read what is known and leave the rest (a first pass before a subcommand
    /// that has options of its own).
    public init(_ args: [String], valued: Set<String>, known: Set<String>, ignoringUnknown: Bool = false) throws(Failure) {
        var i = 0
        while i < args.count {
            let a = args[i]
            if a == "--" { positionals += args[(i + 1)...]; break }
            if a.hasPrefix("--") || a == "-h" {
                var name = a == "-h" ? "help" : String(a.dropFirst(2))
                var value: String?
                if let eq = name.firstIndex(of: "=") { value = String(name[name.index(after: eq)...]); name = String(name[..<eq]) }
                guard known.contains(name) || valued.contains(name) || name == "help" else {
                    if ignoringUnknown { i += 1; continue }
                    let hint = Suggest.closest(to: name, in: Array(known.union(valued))).map { " (did you mean --\($0)?)" } ?? ""
                    throw Failure(description: "unknown option --\(name)\(hint)")
                }
                if valued.contains(name) {
                    if value == nil {
                        guard i + 1 < args.count else { throw Failure(description: "--\(name) needs a value") }
                        i += 1
                        value = args[i]
                    }
                    options[name] = value
                } else {
                    flags.insert(name)
                }
            } else {
                positionals.append(a)
            }
            i += 1
        }
    }

    public func option(_ name: String) -> String? { options[name] }
    public func flag(_ name: String) -> Bool { flags.contains(name) }
}
