import Config
import Glibc
import HostPresence
import Kit
import Registry
import Store
import Support

/// The gateway wire protocol (docs/PROTOCOL.md), in one place: the frames the node sends are built
/// here and only here, with exactly the fields the gateway's closed schema allows; frames it
/// receives are read tolerantly (unknown fields and events are ignored).
public enum GatewayProtocol {
    public static let minProtocol = 3
    /// `hello-ok.policy.maxPayload` when the gateway does not say (its own default).
    public static let defaultMaxPayload = 25 * 1024 * 1024
    public static let maxProtocol = 4
    public static let clientId = "node-host"

    /// Which side of the gateway a connection is on. The node connection serves invokes; the
    /// optional operator connection (same device key) calls `chat.send` and `talk.speak`, which a
    /// `role: "node"` connection may not, as the iOS and Android apps' second session does.
    public struct SessionRole: Sendable, Equatable {
        public let role: String
        public let scopes: [String]
        /// `client.mode`: "node" for the node session; "ui" for the operator one, as the apps send
        /// (the gateway ties neither id nor mode to the role; both are signed).
        public let clientMode: String

        public static let node = SessionRole(role: "node", scopes: [], clientMode: "node")
        /// Read and write: enough for chat.send, chat events and talk.speak, nothing more (sorted,
        /// as the signature's scope list is compared as sent).
        public static let `operator` = SessionRole(role: "operator", scopes: ["operator.read", "operator.write"], clientMode: "ui")

        public var isNode: Bool { role == "node" }
    }
    /// Never change these two between releases: the gateway pins them at pairing (§3.5).
    public static let platform = "linux"
    public static let deviceFamily = "Linux"
    /// Before hello-ok the gateway accepts at most 64 KiB per frame, and so does the node.
    public static let preAuthMaxPayload = 64 * 1024
    /// What the WebSocket decoder allows until the handshake has read hello-ok. Frames the gateway
    /// sends right after hello-ok (an invoke) can be decoded on the I/O thread before the handshake
    /// has raised the limit to `policy.maxPayload`, so the decoder cannot hold the 64 KiB pre-auth
    /// limit; the handshake checks that limit on each message it reads instead.
    public static let decoderLimitBeforeHello = defaultMaxPayload
    public static let defaultTickIntervalMs = 30_000

    // MARK: frames the node sends

    static func request(id: String, method: String, params: JSONValue) -> JSONValue {
        ["type": "req", "id": .string(id), "method": .string(method), "params": params]
    }

    static func response(id: String, ok: Bool, payload: JSONValue?, error: NodeError?) -> JSONValue {
        var o: [String: JSONValue] = ["type": "res", "id": .string(id), "ok": .bool(ok)]
        if let payload { o["payload"] = payload }
        if let error { o["error"] = ["code": .string(error.code.rawValue), "message": .string(error.message)] }
        return .object(o)
    }

    /// The credential sent in `auth` (one of them), and the string that goes into the signature.
    public enum Credential: Sendable, Equatable {
        case deviceToken(String)
        case bootstrapToken(String)
        case token(String)
        case password(String)
        case none

        /// `auth.token ?? auth.deviceToken ?? auth.bootstrapToken ?? ""` — the password is never signed.
        var signedToken: String {
            switch self {
            case .deviceToken(let t), .bootstrapToken(let t), .token(let t): return t
            case .password, .none: return ""
            }
        }

        var authObject: JSONValue? {
            switch self {
            case .deviceToken(let t): return ["deviceToken": .string(t)]
            case .bootstrapToken(let t): return ["bootstrapToken": .string(t)]
            case .token(let t): return ["token": .string(t)]
            case .password(let p): return ["password": .string(p)]
            case .none: return nil
            }
        }

        var kind: String {
            switch self {
            case .deviceToken: return "device token"
            case .bootstrapToken: return "setup-code bootstrap token"
            case .token: return "gateway token"
            case .password: return "gateway password"
            case .none: return "no credential"
            }
        }
    }

    struct ConnectInput {
        var displayName: String
        var modelIdentifier: String?
        var manifest: CommandRegistry.Manifest
        var credential: Credential
        var identity: DeviceIdentity
        var nonce: String
        var signedAtMs: Int64
        var signatureVersion: DeviceAuthPayload.Version
        var locale: String
        var session: SessionRole = .node
    }

    /// `connect` params exactly as §2.2 (the fields the Windows node sends, plus modelIdentifier).
    static func connectParams(_ c: ConnectInput) throws(Crypto.Failure) -> JSONValue {
        var client: [String: JSONValue] = [
            "id": .string(clientId), "version": .string(NodeVersion.version), "platform": .string(platform),
            "deviceFamily": .string(deviceFamily), "mode": .string(c.session.clientMode), "displayName": .string(c.displayName),
        ]
        if let m = c.modelIdentifier, !m.isEmpty, m != "unknown" { client["modelIdentifier"] = .string(m) }
        let payload = DeviceAuthPayload.build(version: c.signatureVersion, deviceId: c.identity.deviceId, clientId: clientId,
                                              clientMode: c.session.clientMode, role: c.session.role, scopes: c.session.scopes,
                                              signedAtMs: c.signedAtMs, token: c.credential.signedToken, nonce: c.nonce,
                                              platform: platform, deviceFamily: deviceFamily)
        // An operator session declares no surface: only the node session serves commands.
        let node = c.session.isNode
        let caps = node ? c.manifest.caps : [], commands = node ? c.manifest.commands : []
        let permissions = node ? c.manifest.permissions : [:]
        var params: [String: JSONValue] = [
            "minProtocol": .number(Double(minProtocol)), "maxProtocol": .number(Double(maxProtocol)),
            "client": .object(client), "role": .string(c.session.role), "scopes": .array(c.session.scopes.map { .string($0) }),
            "caps": .array(caps.map { .string($0) }),
            "commands": .array(commands.map { .string($0) }),
            "permissions": .object(permissions.mapValues { .bool($0) }),
            "locale": .string(c.locale), "userAgent": .string("openclaw-linux-node/\(NodeVersion.version)"),
            "device": ["id": .string(c.identity.deviceId), "publicKey": .string(c.identity.publicKeyBase64url),
                       "signature": .string(try c.identity.sign(payload)), "signedAt": .number(Double(c.signedAtMs)),
                       "nonce": .string(c.nonce)],
        ]
        if let auth = c.credential.authObject { params["auth"] = auth }
        return .object(params)
    }

    static func invokeResult(id: String, nodeId: String, result: Result<JSONValue, NodeError>) -> JSONValue {
        switch result {
        case .success(let payload):
            return ["id": .string(id), "nodeId": .string(nodeId), "ok": true, "payloadJSON": .string(payload.jsonString())]
        case .failure(let e):
            return ["id": .string(id), "nodeId": .string(nodeId), "ok": false,
                    "error": ["code": .string(e.code.rawValue), "message": .string(e.message)]]
        }
    }

    /// The whole `node.invoke.result` request frame as bytes, the payload encoded once, straight
    /// into its `payloadJSON` string (JSONWriter): a 5 MB snapshot is not encoded, escaped and
    /// copied again. The same JSON as `request(…, params: invokeResult(…)).jsonString()`.
    static func invokeResultFrame(frameId: String, id: String, nodeId: String, result: Result<JSONValue, NodeError>) -> [UInt8] {
        guard case .success(let payload) = result else {
            return request(id: frameId, method: "node.invoke.result", params: invokeResult(id: id, nodeId: nodeId, result: result)).jsonBytes
        }
        var w = JSONWriter()
        w.raw("{\"id\":"); w.string(frameId)
        w.raw(",\"method\":\"node.invoke.result\",\"params\":{\"id\":"); w.string(id)
        w.raw(",\"nodeId\":"); w.string(nodeId)
        w.raw(",\"ok\":true,\"payloadJSON\":\"")
        w.write(payload, quoted: true)
        w.raw("\"},\"type\":\"req\"}")
        return w.bytes
    }

    static func nodeEvent(_ event: String, payload: JSONValue) -> JSONValue {
        ["event": .string(event), "payloadJSON": .string(payload.jsonString())]
    }

    // MARK: frames the node receives

    /// An error from a `res` frame (ErrorShape), with `details.code` when present.
    public struct GatewayError: Error, Sendable, Equatable, CustomStringConvertible {
        public let code: String
        public let message: String
        public let detailCode: String?
        public let details: JSONValue?
        public let retryable: Bool
        public let retryAfterMs: Int?

        init(_ v: JSONValue?) {
            code = v?["code"]?.stringValue ?? "UNKNOWN"
            message = v?["message"]?.stringValue ?? ""
            details = v?["details"]
            detailCode = details?["code"]?.stringValue
            retryable = v?["retryable"]?.boolValue ?? details?["retryable"]?.boolValue ?? false
            retryAfterMs = v?["retryAfterMs"]?.intValue ?? details?["retryAfterMs"]?.intValue
        }

        /// The most specific code: `details.code` (e.g. AUTH_TOKEN_MISMATCH) over `code` (INVALID_REQUEST).
        public var specificCode: String { detailCode ?? code }
        public var description: String { "\(specificCode): \(message)" }
    }

    enum Incoming {
        case event(name: String, payload: JSONValue?)
        case response(id: String, ok: Bool, payload: JSONValue?, error: GatewayError?)
        case request(id: String, method: String, params: JSONValue?)
    }

    /// nil for anything that is not a well-formed frame (logged and ignored by the session).
    static func parse(_ text: String) -> Incoming? {
        guard let v = JSONValue.parse(text), case .object = v, let type = v["type"]?.stringValue else { return nil }
        switch type {
        case "event":
            guard let name = v["event"]?.stringValue else { return nil }
            return .event(name: name, payload: v["payload"])
        case "res":
            guard let id = v["id"]?.stringValue, let ok = v["ok"]?.boolValue else { return nil }
            return .response(id: id, ok: ok, payload: v["payload"], error: ok ? nil : GatewayError(v["error"]))
        case "req":
            guard let id = v["id"]?.stringValue, let method = v["method"]?.stringValue else { return nil }
            return .request(id: id, method: method, params: v["params"])
        default:
            return nil
        }
    }

    /// A `node.invoke.request` event payload.
    struct InvokeRequest: Sendable {
        let id: String
        let command: String
        /// Params, parsed once from `paramsJSON` (or the object some hosts send as `params`).
        let params: InvokeParams
        let timeoutMs: Int?

        init?(_ p: JSONValue?) {
            guard let p, let id = p["id"]?.stringValue, !id.isEmpty, let command = p["command"]?.stringValue else { return nil }
            self.id = id
            self.command = command
            if let s = p["paramsJSON"]?.stringValue { params = InvokeParams(text: s) }
            else { params = InvokeParams(p["params"]) }  // the node host accepts an object too
            timeoutMs = p["timeoutMs"]?.intValue
        }
    }

    /// What the node keeps from `hello-ok`.
    public struct HelloOk: Sendable {
        public let protocolVersion: Int?
        public let serverVersion: String?
        public let deviceToken: String?
        public let deviceTokenScopes: [String]
        public let issuedAtMs: Int64?
        /// `auth.deviceTokens`: tokens for further roles a setup-code bootstrap hands over (e.g. a
        /// bounded operator token next to the node's).
        public let extraDeviceTokens: [IssuedToken]
        public let maxPayload: Int
        public let tickIntervalMs: Int
        public let canvasHostUrl: String?
        public let pluginSurfaceUrls: [String: String]
        public let mainSessionKey: String?

        /// `url` when it is an http or https URL, else nil.
        static func webURL(_ url: String) -> String? {
            let lower = url.lowercased()
            return lower.hasPrefix("http://") || lower.hasPrefix("https://") ? url : nil
        }

        init?(_ p: JSONValue?) {
            guard let p, p["type"]?.stringValue == "hello-ok" else { return nil }
            protocolVersion = p["protocol"]?.intValue
            serverVersion = p["server"]?["version"]?.stringValue
            deviceToken = p["auth"]?["deviceToken"]?.stringValue
            deviceTokenScopes = p["auth"]?["scopes"]?.arrayValue?.compactMap(\.stringValue) ?? []
            issuedAtMs = p["auth"]?["issuedAtMs"]?.intValue.map { Int64($0) }
            extraDeviceTokens = (p["auth"]?["deviceTokens"]?.arrayValue ?? []).compactMap(IssuedToken.init)
            let mp = p["policy"]?["maxPayload"]?.intValue ?? GatewayProtocol.defaultMaxPayload
            // What the gateway accepts from us: results are fitted to it, however small. (The
            // limit on what we accept from it never drops below the pre-auth 64 KiB; see
            // GatewayConnection.)
            maxPayload = max(mp, 1024)
            // A zero or absurd tick would make the liveness watchdog fire constantly.
            tickIntervalMs = max(p["policy"]?["tickIntervalMs"]?.intValue ?? GatewayProtocol.defaultTickIntervalMs, 100)
            // Surfaces the node's browser will load: web origins only (a file:/// "host" would turn
            // relative canvas targets into local files).
            canvasHostUrl = p["canvasHostUrl"]?.stringValue.flatMap(Self.webURL)
            pluginSurfaceUrls = (p["pluginSurfaceUrls"]?.objectValue ?? [:]).compactMapValues { $0.stringValue.flatMap(Self.webURL) }
            mainSessionKey = p["snapshot"]?["sessionDefaults"]?["mainSessionKey"]?.stringValue
        }
    }

    /// One entry of `hello-ok.auth.deviceTokens`: `{deviceToken, role, scopes, issuedAtMs}`.
    public struct IssuedToken: Sendable, Equatable {
        public let token: String
        public let role: String
        public let scopes: [String]
        public let issuedAtMs: Int64?

        init?(_ v: JSONValue) {
            guard let t = v["deviceToken"]?.stringValue, !t.isEmpty, let r = v["role"]?.stringValue, !r.isEmpty else { return nil }
            token = t; role = r
            scopes = v["scopes"]?.arrayValue?.compactMap(\.stringValue) ?? []
            issuedAtMs = v["issuedAtMs"]?.intValue.map { Int64($0) }
        }
    }
}
