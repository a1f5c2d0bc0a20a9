import Config
import Kit
import Transport

/// How the node decides to trust a wss:// gateway's certificate (docs/PROTOCOL.md §8.2), in order:
///   1. gateway.tlsFingerprint from the config — the person said so;
///   2. the pin stored after an earlier connect — never overridden by what discovery advertises;
///   3. with trust-on-first-use allowed and a fingerprint hint from discovery (TXT
///      gatewayTlsSha256): the first certificate must match the hint, and is then pinned as usual;
///   4. trust-on-first-use without a hint; 5. the system trust store.
/// The hint is unauthenticated: it can only make the first connect stricter, never looser.
public enum GatewayTrust {
    public enum Source: Sendable, Equatable { case configured, stored, discoveryHint, firstUse, system }

    public static func policy(configured: String?, stored: String?, hint: String?, allowTOFU: Bool) -> (TLSPolicy, Source) {
        if let configured { return (.pinned(configured), .configured) }
        if let stored { return (.pinned(stored), .stored) }
        if allowTOFU, let hint { return (.pinned(hint), .discoveryHint) }
        if allowTOFU { return (.trustOnFirstUse, .firstUse) }
        return (.system, .system)
    }
}
