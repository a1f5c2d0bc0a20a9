import Glibc

/// The process environment as a dictionary, read from `environ` (what ProcessInfo gave; the node
/// does not link Foundation). Read fresh on each call: NodeSecrets removes the gateway secrets
/// from it at start-up.
public enum ProcessEnvironment {
    /// Held while `environ` is read here and while NodeSecrets takes entries out of it (a reload
    /// can withhold a new name while another thread builds a child's environment).
    static let lock = Locked(())

    public static var current: [String: String] {
        lock.withLock { _ in read() }
    }

    private static func read() -> [String: String] {
        var out: [String: String] = [:]
        var p = environ
        while let entry = p.pointee {
            let text = String(cString: entry)
            if let eq = text.firstIndex(of: "=") {
                let key = String(text[..<eq])
                // The first definition wins, as getenv(3) finds it.
                if out[key] == nil { out[key] = String(text[text.index(after: eq)...]) }
            }
            p += 1
        }
        return out
    }

    /// One variable (nil when unset).
    public static func value(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }
}
