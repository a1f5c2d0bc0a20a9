import Glibc

/// The gateway credentials the node may be given in its environment (`OPENCLAW_GATEWAY_TOKEN`,
/// `OPENCLAW_GATEWAY_PASSWORD`). Taken out of the process environment as the CLI starts, so that
/// no child inherits them — Chromium, plugins, launched applications, system.run, and whatever a
/// library spawns — and kept here for the config, which reads them on every load and reload.
public enum NodeSecrets {
    public static let keys = ["OPENCLAW_GATEWAY_TOKEN", "OPENCLAW_GATEWAY_PASSWORD"]

    private static let held = Locked<[String: String]>([:])

    /// Moves the secrets from the environment into memory (idempotent; a later value wins).
    public static func withhold() {
        held.withLock { held in
            for key in keys {
                guard let value = getenv(key) else { continue }
                held[key] = String(cString: value)
                unsetenv(key)
            }
        }
    }

    /// The process environment as the config sees it: with the withheld secrets.
    public static var environment: [String: String] {
        let withheld = held.withLock { $0 }
        return ProcessEnvironment.current.merging(withheld) { current, _ in current }
    }
}
