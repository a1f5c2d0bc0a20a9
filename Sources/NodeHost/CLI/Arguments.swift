import Config
import HostPresence
import Kit
import Registry
import Runtime
import Store
import Support

/// Minimal argument reader: positionals plus `--flag` and `--option VALUE` / `--option=VALUE`.
struct Arguments {
    struct Failure: Error, CustomStringConvertible { let description: String }

    private(set) var positionals: [String] = []
    private var options: [String: String] = [:]
    private var flags: Set<String> = []

    /// `valued` lists options that take a value; anything else starting with `--` is a flag.
    init(_ args: [String], valued: Set<String>, known: Set<String>) throws(Failure) {
        var i = 0
        while i < args.count {
            let a = args[i]
            if a == "--" { positionals += args[(i + 1)...]; break }
            if a.hasPrefix("--") || a == "-h" {
                var name = a == "-h" ? "help" : String(a.dropFirst(2))
                var value: String?
                if let eq = name.firstIndex(of: "=") { value = String(name[name.index(after: eq)...]); name = String(name[..<eq]) }
                guard known.contains(name) || valued.contains(name) || name == "help" else {
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

    func option(_ name: String) -> String? { options[name] }
    func flag(_ name: String) -> Bool { flags.contains(name) }
}
