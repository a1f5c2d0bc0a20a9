import Config
import Glibc
import Kit
import Store
import Support
import Transport

/// A pairing setup payload (docs/PROTOCOL.md §3.4, §3.9): `{url, urls?, bootstrapToken,
/// expiresAtMs?, tlsFingerprint?}`, from a setup code (`openclaw qr`: base64url without padding),
/// an `oc-pair://<code>` link, or the body a one-time join URL (`https://<gateway>/j/<code>`)
/// answers with once. Messages are upstream's, so a person sees what the other clients say.
public struct SetupCode: Sendable, Equatable {
    public let url: String
    public let urls: [String]
    public let bootstrapToken: String
    public let expiresAtMs: Int64?
    /// Normalized (lower-case hex); only for direct wss:// URLs.
    public let tlsFingerprint: String?

    public struct Invalid: Error, CustomStringConvertible, Equatable {
        public let description: String
        static let code = Invalid(description: "Invalid pairing setup code or URL.")
        static let payload = Invalid(description: "Invalid pairing setup payload.")
        static let expired = Invalid(description: "Pairing setup code has expired.")
    }

    /// What a pairing text is, before anything is fetched.
    public enum Form: Sendable, Equatable {
        /// A setup code or oc-pair:// link: the code itself.
        case code(String)
        /// A one-time join URL: fetched once (GET) for the payload.
        case joinURL(URLParts)
    }

    /// Classifies a setup code, `oc-pair://` link or join URL (https, or http to loopback only).
    public static func form(of text: String) throws(Invalid) -> Form {
        let t = text.trimmed()
        guard !t.isEmpty, t.count <= 2048 else { throw .code }
        if t.lowercased().hasPrefix("oc-pair://") {
            let code = String(t.dropFirst("oc-pair://".count))
            guard isCode(code) else { throw .code }
            return .code(code)
        }
        if let scheme = URLParts.scheme(of: t), scheme == "http" || scheme == "https" {
            guard let u = URLParts(string: t), let host = u.hostText, !u.authority.contains("@"),
                  u.path.hasPrefix("/j/"), isCode(String(u.path.dropFirst(3))),
                  scheme == "https" || ResolvedAddress.isLoopback(String(host)) else { throw .code }
            return .joinURL(u)
        }
        guard isCode(t) else { throw .code }
        return .code(t)
    }

    static func isCode(_ s: String) -> Bool {
        !s.isEmpty && s.unicodeScalars.allSatisfy { $0.isASCII && (("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "-" || $0 == "_") }
    }

    /// Decodes a setup code or oc-pair:// link (not a join URL: see `form(of:)`).
    public init(decoding text: String, nowMs: Int64 = WallClock.milliseconds) throws(Invalid) {
        guard case .code(let code) = try Self.form(of: text) else { throw .code }
        guard let bytes = Encoding.fromBase64url(code), bytes.count <= 4096 else { throw .code }
        try self.init(payload: bytes, nowMs: nowMs)
    }

    /// Reads a payload (decoded setup code, or a join URL's body).
    public init(payload bytes: [UInt8], nowMs: Int64 = WallClock.milliseconds) throws(Invalid) {
        guard let v = JSONValue.parse(bytes), case .object = v else { throw .payload }
        guard let url = v["url"]?.stringValue.flatMap(Self.gatewayURL) else { throw .payload }
        guard let token = v["bootstrapToken"]?.stringValue?.trimmed(), !token.isEmpty, token.count <= 512 else { throw .payload }
        var urls: [String] = []
        if let list = v["urls"] {
            guard let items = list.arrayValue, (1...8).contains(items.count) else { throw .payload }
            for item in items {
                guard let u = item.stringValue.flatMap(Self.gatewayURL) else { throw .payload }
                urls.append(u)
            }
        }
        var expires: Int64?
        if let e = v["expiresAtMs"] {
            guard let d = e.doubleValue, d >= 0, d <= 9_007_199_254_740_991, d == d.rounded() else { throw .payload }
            expires = Int64(d)
        }
        var fingerprint: String?
        if let f = v["tlsFingerprint"] {
            guard let s = f.stringValue, case let n = TLSPolicy.normalizeFingerprint(s), n.count == 64,
                  n.allSatisfy({ $0.isHexDigit }) else { throw .payload }
            fingerprint = n
        }
        if let expires, expires <= nowMs { throw .expired }
        self.url = url
        self.urls = urls
        self.bootstrapToken = token
        self.expiresAtMs = expires
        self.tlsFingerprint = fingerprint
    }

    /// `scheme://host[:port][path]`, ws or wss, no user information, query or fragment; nil otherwise.
    static func gatewayURL(_ text: String) -> String? {
        let t = text.trimmed()
        guard let u = URLParts(string: t), u.scheme == "ws" || u.scheme == "wss", u.hostText != nil, !u.authority.contains("@"),
              u.query == nil, u.fragment == nil, WebSocketURL(string: t) != nil else { return nil }
        return "\(u.scheme)://\(u.authority)\(u.path == "/" ? "" : u.path)"
    }
}
