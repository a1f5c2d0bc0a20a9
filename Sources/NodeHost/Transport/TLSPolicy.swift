import Store
import Support

/// How a wss:// server's certificate is trusted (docs/PROTOCOL.md §8.2).
public enum TLSPolicy: Sendable, Equatable {
    /// System trust store + hostname.
    case system
    /// Exactly this leaf SHA-256 (hex), whatever signed it.
    case pinned(String)
    /// System trust if it verifies; otherwise accept and report the fingerprint so the caller pins it.
    case trustOnFirstUse

    /// "sha256:AB:12…", "SHA-256 ab12…" → "ab12…" (the form OpenClaw's pinning code normalises to).
    public static func normalizeFingerprint(_ s: String) -> String {
        var t = s.trimmingPrefix(ignoringCase: "sha256:").trimmingPrefix(ignoringCase: "sha-256")
        t = String(t.filter { $0.isHexDigit }).lowercased()
        return t
    }
}

extension String {
    fileprivate func trimmingPrefix(ignoringCase prefix: String) -> String {
        let trimmed = self.drop(while: { $0 == " " })
        return trimmed.lowercased().hasPrefix(prefix) ? String(trimmed.dropFirst(prefix.count)) : String(trimmed)
    }
}
