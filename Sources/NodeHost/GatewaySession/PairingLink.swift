import Kit
import Store
import Support
import Transport

/// A pairing text — setup code, `oc-pair://` link or one-time join URL — turned into its setup
/// payload, and what the node keeps of it (docs/PROTOCOL.md §3.9): the gateway URL(s) and TLS
/// fingerprint in the state database. The bootstrap token is never stored; the device token the
/// gateway issues for it is (GatewayClient).
public enum PairingLink {
    public struct Failure: Error, CustomStringConvertible { public let description: String }

    /// State settings: the gateway a pairing link named, for a config without gateway.url.
    static let urlKey = "pairing.gatewayUrl"
    static let urlsKey = "pairing.gatewayUrls"

    /// Decodes, or fetches once (a join URL), the payload; checks its expiry.
    public static func resolve(_ text: String) async throws(Failure) -> SetupCode {
        let form: SetupCode.Form
        do { form = try SetupCode.form(of: text) } catch { throw Failure(description: error.description) }
        switch form {
        case .code:
            do { return try SetupCode(decoding: text) } catch { throw Failure(description: error.description) }
        case .joinURL(let u):
            let fetched: Result<[UInt8], JoinURLFetcher.Failure> = await BlockingExecutor.run("join-url") { _ in
                do throws(JoinURLFetcher.Failure) { return .success(try JoinURLFetcher.fetch(u)) } catch { return .failure(error) }
            }
            switch fetched {
            case .failure(let e): throw Failure(description: e.description)
            case .success(let body):
                do { return try SetupCode(payload: body) } catch { throw Failure(description: error.description) }
            }
        }
    }

    /// Keeps the payload's gateway URL(s) and TLS fingerprint (as the gateway record's pin, for a
    /// direct wss:// URL without one yet).
    public static func remember(_ code: SetupCode, store: StateStore) throws(StateStore.Failure) {
        try store.setSetting(urlKey, code.url)
        try store.setSetting(urlsKey, code.urls.isEmpty ? nil : JSONValue.array(code.urls.map { .string($0) }).jsonString())
        guard let u = WebSocketURL(string: code.url), let key = GatewayClient.key(for: u) else { return }
        var record = try store.gateway(key) ?? StateStore.GatewayRecord(gateway: key, url: code.url)
        record.url = code.url
        if let fp = code.tlsFingerprint, u.scheme == "wss", record.tlsPin == nil { record.tlsPin = fp }
        try store.saveGateway(record)
    }

    /// The gateway URL a pairing link left in the state, if any.
    public static func rememberedURL(_ store: StateStore) -> String? { (try? store.setting(urlKey)) ?? nil }

    public static func rememberedURLs(_ store: StateStore) -> [String] {
        guard let text = (try? store.setting(urlsKey)) ?? nil, let v = JSONValue.parse(text) else { return [] }
        return v.arrayValue?.compactMap(\.stringValue) ?? []
    }
}
