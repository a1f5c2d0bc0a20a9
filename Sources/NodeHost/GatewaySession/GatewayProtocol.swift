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
    /// The largest `policy.maxPayload` taken from a gateway (upstream's default is 25 MiB).
    public static let maxAcceptedPayload = 1 << 30
    /// A connect cap of the session, not of a capability: a pairing refusal may keep the socket open
    /// (`details.waitForResolution`) and push the decision on it; the node listens there.
    static let pairingWaitCap = "device-pairing-wait"
    public static let maxProtocol = 4
    public static let clientId = "node-host"
    /// The node's whole skill catalog, replacing what it published before (module Skills).
    static let skillsUpdateMethod = "node.skills.update"

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

        /// The operator session's scopes as the token the device holds allows: a voice-node setup
        /// code (`openclaw qr --voice-node`) grants read + talk, which is what is asked then (a
        /// connect asking for more than the token carries is refused); a token with write (or
        /// admin), and no token at all (an approval is asked for), ask read + write, which older
        /// gateways need for talk.session.* and chat.send needs everywhere.
        public static func `operator`(tokenScopes: [String]?) -> SessionRole {
            guard let held = tokenScopes, !held.contains("operator.write"), !held.contains("operator.admin"),
                  held.contains("operator.talk") else { return .operator }
            return SessionRole(role: "operator", scopes: ["operator.read", "operator.talk"], clientMode: "ui")
        }

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

    /// The frames and params the node sends, as types: each has exactly the fields the gateway's
    /// closed schema allows (absent optionals are left out). `frame(_:)` turns one into the tree
    /// JSONWriter writes (sorted keys), except the success result frame, which
    /// `invokeResultFrame` writes in one pass.
    static func frame<T: Encodable>(_ value: T) -> JSONValue { (try? JSONValueEncoder.encode(value)) ?? .null }

    /// ErrorShape: `{code, message}`.
    struct ErrorShape: Encodable, Sendable, Equatable {
        let code: String
        let message: String
        init(_ e: NodeError) { code = e.code.rawValue; message = e.message }
    }

    /// A `req` frame.
    struct RequestFrame<Params: Encodable & Sendable>: Encodable, Sendable {
        var type = "req"
        let id: String
        let method: String
        let params: Params
    }

    /// A `res` frame (the node's answer to the rare request the gateway sends it).
    struct ResponseFrame: Encodable, Sendable {
        var type = "res"
        let id: String
        let ok: Bool
        let payload: JSONValue?
        let error: ErrorShape?
    }

    /// `node.invoke.result` params: `payloadJSON` (or, for a structured-result command, `payload`)
    /// on success, `error` on failure; never both payload fields.
    struct InvokeResultParams: Encodable, Sendable {
        let id: String
        let nodeId: String
        let ok: Bool
        var payload: JSONValue? = nil
        let payloadJSON: String?
        let error: ErrorShape?
    }

    /// `node.invoke.progress` params (closed): one chunk of a running invoke, `seq` from 0 per
    /// invoke without gaps, `chunk` ≤ 16 KiB UTF-8, "" = heartbeat.
    struct ProgressParams: Encodable, Sendable {
        let invokeId: String
        let nodeId: String
        let seq: Int
        let chunk: String
    }

    static func progress(invokeId: String, nodeId: String, seq: Int, chunk: String) -> JSONValue {
        frame(ProgressParams(invokeId: invokeId, nodeId: nodeId, seq: seq, chunk: chunk))
    }

    /// `node.event` params.
    struct NodeEventParams: Encodable, Sendable {
        let event: String
        let payloadJSON: String
    }

    /// `connect` params (§2.2).
    struct ConnectParams: Encodable, Sendable {
        struct Client: Encodable, Sendable {
            let id: String
            let version: String
            let platform: String
            let deviceFamily: String
            let mode: String
            let displayName: String
            let modelIdentifier: String?
        }
        struct Device: Encodable, Sendable {
            let id: String
            let publicKey: String
            let signature: String
            let signedAt: Int64
            let nonce: String
        }
        let minProtocol: Int
        let maxProtocol: Int
        let client: Client
        let role: String
        let scopes: [String]
        let caps: [String]
        let commands: [String]
        let permissions: [String: Bool]
        let locale: String
        let userAgent: String
        let device: Device
        let auth: Auth?
    }

    /// `connect.auth`: one credential.
    struct Auth: Encodable, Sendable, Equatable {
        var deviceToken: String?
        var bootstrapToken: String?
        var token: String?
        var password: String?
    }

    static func request(id: String, method: String, params: JSONValue) -> JSONValue {
        frame(RequestFrame(id: id, method: method, params: params))
    }

    static func response(id: String, ok: Bool, payload: JSONValue?, error: NodeError?) -> JSONValue {
        frame(ResponseFrame(id: id, ok: ok, payload: payload, error: error.map(ErrorShape.init)))
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

        var auth: Auth? {
            switch self {
            case .deviceToken(let t): return Auth(deviceToken: t)
            case .bootstrapToken(let t): return Auth(bootstrapToken: t)
            case .token(let t): return Auth(token: t)
            case .password(let p): return Auth(password: p)
            case .none: return nil
            }
        }

        var authObject: JSONValue? { auth.map(GatewayProtocol.frame) }

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
        let model = c.modelIdentifier.flatMap { $0.isEmpty || $0 == "unknown" ? nil : $0 }
        let client = ConnectParams.Client(id: clientId, version: NodeVersion.version, platform: platform, deviceFamily: deviceFamily,
                                          mode: c.session.clientMode, displayName: c.displayName, modelIdentifier: model)
        let payload = DeviceAuthPayload.build(version: c.signatureVersion, deviceId: c.identity.deviceId, clientId: clientId,
                                              clientMode: c.session.clientMode, role: c.session.role, scopes: c.session.scopes,
                                              signedAtMs: c.signedAtMs, token: c.credential.signedToken, nonce: c.nonce,
                                              platform: platform, deviceFamily: deviceFamily)
        // An operator session declares no surface: only the node session serves commands.
        let node = c.session.isNode
        let caps = node ? c.manifest.caps + [pairingWaitCap] : [], commands = node ? c.manifest.commands : []
        let permissions = node ? c.manifest.permissions : [:]
        let device = ConnectParams.Device(id: c.identity.deviceId, publicKey: c.identity.publicKeyBase64url,
                                          signature: try c.identity.sign(payload), signedAt: c.signedAtMs, nonce: c.nonce)
        return frame(ConnectParams(minProtocol: minProtocol, maxProtocol: maxProtocol, client: client, role: c.session.role,
                                   scopes: c.session.scopes, caps: caps, commands: commands, permissions: permissions,
                                   locale: c.locale, userAgent: "openclaw-linux-node/\(NodeVersion.version)", device: device,
                                   auth: c.credential.auth))
    }

    static func invokeResult(id: String, nodeId: String, result: Result<JSONValue, NodeError>, structured: Bool = false) -> JSONValue {
        switch result {
        case .success(let payload) where structured:
            return frame(InvokeResultParams(id: id, nodeId: nodeId, ok: true, payload: payload, payloadJSON: nil, error: nil))
        case .success(let payload):
            return frame(InvokeResultParams(id: id, nodeId: nodeId, ok: true, payloadJSON: payload.jsonString(), error: nil))
        case .failure(let e):
            return frame(InvokeResultParams(id: id, nodeId: nodeId, ok: false, payloadJSON: nil, error: ErrorShape(e)))
        }
    }

    /// The whole `node.invoke.result` request frame as bytes, the payload encoded once, straight
    /// into its `payloadJSON` string (JSONWriter): a 5 MB snapshot is not encoded, escaped and
    /// copied again. The same JSON as `request(…, params: invokeResult(…)).jsonString()`.
    /// `structured`: the payload goes as the `payload` object instead (CommandSpec.structuredResult).
    static func invokeResultFrame(frameId: String, id: String, nodeId: String, result: Result<JSONValue, NodeError>,
                                  structured: Bool = false) -> [UInt8] {
        guard case .success(let payload) = result else {
            return request(id: frameId, method: "node.invoke.result", params: invokeResult(id: id, nodeId: nodeId, result: result)).jsonBytes
        }
        var w = JSONWriter()
        w.raw("{\"id\":"); w.string(frameId)
        w.raw(",\"method\":\"node.invoke.result\",\"params\":{\"id\":"); w.string(id)
        w.raw(",\"nodeId\":"); w.string(nodeId)
        if structured {
            w.raw(",\"ok\":true,\"payload\":")
            w.write(payload)
            w.raw("},\"type\":\"req\"}")
        } else {
            w.raw(",\"ok\":true,\"payloadJSON\":\"")
            w.write(payload, quoted: true)
            w.raw("\"},\"type\":\"req\"}")
        }
        return w.bytes
    }

    static func nodeEvent(_ event: String, payload: JSONValue) -> JSONValue {
        frame(NodeEventParams(event: event, payloadJSON: payload.jsonString()))
    }

    // MARK: frames the node receives

    /// An error from a `res` frame (ErrorShape), with `details.code` when present.
    public struct GatewayError: Error, Sendable, Equatable, CustomStringConvertible {
        public let code: String
        public let message: String
        public let detailCode: String?
        public let details: JSONValue?
        public let retryable: Bool
        /// The top-level `error.retryable` as sent (nil when absent): `false` pauses reconnects (§3.8).
        public let retryableFlag: Bool?
        public let retryAfterMs: Int?

        init(_ v: JSONValue?) {
            let w = v.flatMap { try? JSONValueDecoder.decode(Wire.self, from: $0) }
            code = w?.code ?? "UNKNOWN"
            message = w?.message ?? ""
            details = w?.details
            let d = w?.details.flatMap { try? JSONValueDecoder.decode(Details.self, from: $0) }
            detailCode = d?.code
            retryable = w?.retryable ?? d?.retryable ?? false
            retryableFlag = w?.retryable
            retryAfterMs = w?.retryAfterMs ?? d?.retryAfterMs
        }

        /// ErrorShape as sent; a field of the wrong type counts as absent.
        struct Wire: Decodable {
            let code: String?, message: String?, details: JSONValue?, retryable: Bool?, retryAfterMs: Int?
            enum CodingKeys: String, CodingKey { case code, message, details, retryable, retryAfterMs }
            init(from decoder: Decoder) throws {
                let c = try decoder.container(keyedBy: CodingKeys.self)
                code = c.lenient(String.self, .code); message = c.lenient(String.self, .message)
                details = try c.raw(.details); retryable = c.lenient(Bool.self, .retryable)
                retryAfterMs = c.lenient(Int.self, .retryAfterMs)
            }
        }

        /// The parts of `details` the node reads (the gateway's own error code, retry hints).
        struct Details: Decodable {
            let code: String?, retryable: Bool?, retryAfterMs: Int?
            enum CodingKeys: String, CodingKey { case code, retryable, retryAfterMs }
            init(from decoder: Decoder) throws {
                let c = try decoder.container(keyedBy: CodingKeys.self)
                code = c.lenient(String.self, .code); retryable = c.lenient(Bool.self, .retryable)
                retryAfterMs = c.lenient(Int.self, .retryAfterMs)
            }
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

    /// The frames the node receives, decoded with JSONValueDecoder: only the fields the node reads
    /// (unknown ones are ignored); a field it reads with the wrong type makes the frame malformed.
    /// A present `payload`/`params` is kept as it is, `null` included.
    struct FrameHead: Decodable { let type: String }

    struct EventFrame: Decodable {
        let event: String
        let payload: JSONValue?
        enum CodingKeys: String, CodingKey { case event, payload }
        init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            event = try c.decode(String.self, forKey: .event)
            payload = try c.raw(.payload)
        }
    }

    struct ResponseIn: Decodable {
        let id: String
        let ok: Bool
        let payload: JSONValue?
        let error: JSONValue?
        enum CodingKeys: String, CodingKey { case id, ok, payload, error }
        init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            id = try c.decode(String.self, forKey: .id)
            ok = try c.decode(Bool.self, forKey: .ok)
            payload = try c.raw(.payload)
            error = try c.raw(.error)
        }
    }

    struct RequestIn: Decodable {
        let id: String
        let method: String
        let params: JSONValue?
        enum CodingKeys: String, CodingKey { case id, method, params }
        init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            id = try c.decode(String.self, forKey: .id)
            method = try c.decode(String.self, forKey: .method)
            params = try c.raw(.params)
        }
    }

    /// nil for anything that is not a well-formed frame (logged and ignored by the session).
    static func parse(_ text: String) -> Incoming? {
        guard let v = JSONValue.parse(text), case .object = v,
              let head = try? JSONValueDecoder.decode(FrameHead.self, from: v) else { return nil }
        switch head.type {
        case "event":
            guard let f = try? JSONValueDecoder.decode(EventFrame.self, from: v) else { return nil }
            return .event(name: f.event, payload: f.payload)
        case "res":
            guard let f = try? JSONValueDecoder.decode(ResponseIn.self, from: v) else { return nil }
            return .response(id: f.id, ok: f.ok, payload: f.payload, error: f.ok ? nil : GatewayError(f.error))
        case "req":
            guard let f = try? JSONValueDecoder.decode(RequestIn.self, from: v) else { return nil }
            return .request(id: f.id, method: f.method, params: f.params)
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
            guard let p, let wire = try? JSONValueDecoder.decode(Wire.self, from: p), !wire.id.isEmpty else { return nil }
            id = wire.id
            command = wire.command
            if let s = wire.paramsJSON { params = InvokeParams(text: s) }
            else { params = InvokeParams(wire.params) }  // the node host accepts an object too
            timeoutMs = wire.timeoutMs
        }

        /// The payload as sent: `id` and `command` must be strings; a `paramsJSON` that is not a
        /// string or a `timeoutMs` that is not an integer is taken as absent.
        struct Wire: Decodable {
            let id: String
            let command: String
            let paramsJSON: String?
            let params: JSONValue?
            let timeoutMs: Int?
            enum CodingKeys: String, CodingKey { case id, command, paramsJSON, params, timeoutMs }
            init(from decoder: Decoder) throws {
                let c = try decoder.container(keyedBy: CodingKeys.self)
                id = try c.decode(String.self, forKey: .id)
                command = try c.decode(String.self, forKey: .command)
                paramsJSON = c.lenient(String.self, .paramsJSON)
                params = try c.raw(.params)
                timeoutMs = c.lenient(Int.self, .timeoutMs)
            }
        }
    }

    /// A `node.invoke.input` event payload `{id, nodeId, seq, payloadJSON}`, read leniently (extra
    /// keys ignored) but with each field of its type: anything else is dropped.
    struct InvokeInput: Sendable, Decodable {
        let id: String
        let seq: Int
        let payloadJSON: String
        enum CodingKeys: String, CodingKey { case id, seq, payloadJSON }

        /// nil for a malformed one, or one over the 16 KiB the gateway sends at most.
        static func read(_ p: JSONValue?) -> InvokeInput? {
            guard let p, let v = try? JSONValueDecoder.decode(InvokeInput.self, from: p), !v.id.isEmpty, v.seq >= 0,
                  p["seq"]?.doubleValue == Double(v.seq), v.payloadJSON.utf8.count <= ProgressText.maxChunkBytes else { return nil }
            return v
        }
    }

    /// The invoke id of a `node.invoke.cancel` (`invokeId`; `id` from hosts that use that name).
    static func cancelledInvokeId(_ p: JSONValue?) -> String? {
        guard let id = p?["invokeId"]?.stringValue ?? p?["id"]?.stringValue, !id.isEmpty else { return nil }
        return id
    }

    /// The answer to a `node.invoke.progress`: `{ok:true, ignored:true}` means stop sending.
    static func progressDelivery(_ reply: Result<JSONValue, GatewayError>) -> DuplexChannel.Delivery {
        switch reply {
        case .success(let p): return p["ignored"]?.boolValue == true ? .ignored : .accepted
        case .failure: return .failed
        }
    }

    /// The answer to a `node.event` (closed `NodeEventResult`): `handled:false` with a reason is an
    /// answer, not an error (the gateway saw the event and chose not to use it).
    struct NodeEventAnswer: Sendable, Equatable {
        let handled: Bool
        let reason: String?
        init(_ p: JSONValue) {
            handled = p["handled"]?.boolValue ?? true  // older gateways answer {ok:true}
            reason = p["reason"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
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
            guard let p, let w = try? JSONValueDecoder.decode(Wire.self, from: p), w.type == "hello-ok" else { return nil }
            protocolVersion = w.protocolVersion
            serverVersion = w.server?.version
            deviceToken = w.auth?.deviceToken
            deviceTokenScopes = w.auth?.scopes ?? []
            issuedAtMs = w.auth?.issuedAtMs
            extraDeviceTokens = (w.auth?.deviceTokens ?? []).compactMap(IssuedToken.init)
            // What the gateway accepts from us: results are fitted to it, however small. (The
            // limit on what we accept from it never drops below the pre-auth 64 KiB; see
            // GatewayConnection.) Held to 1 GiB at most: the limit also sizes what the node accepts
            // from the gateway and the bitrates of clips, so a gateway's 9e18 meant unbounded buffers
            // and an overflow.
            maxPayload = min(max(w.policy?.maxPayload ?? GatewayProtocol.defaultMaxPayload, 1024), GatewayProtocol.maxAcceptedPayload)
            // A zero or absurd tick would make the liveness watchdog fire constantly.
            tickIntervalMs = max(w.policy?.tickIntervalMs ?? GatewayProtocol.defaultTickIntervalMs, 100)
            // Surfaces the node's browser will load: web origins only (a file:/// "host" would turn
            // relative canvas targets into local files).
            canvasHostUrl = w.canvasHostUrl.flatMap(Self.webURL)
            pluginSurfaceUrls = (w.pluginSurfaceUrls ?? [:]).compactMapValues { $0.stringValue.flatMap(Self.webURL) }
            mainSessionKey = w.snapshot?.sessionDefaults?.mainSessionKey
        }

        /// hello-ok as sent: the fields the node reads. Any of them of the wrong type counts as
        /// absent (a newer gateway's change of shape costs a default, not the session).
        struct Wire: Decodable {
            let type: String
            let protocolVersion: Int?
            let server: Server?
            let auth: Auth?
            let policy: Policy?
            let canvasHostUrl: String?
            let pluginSurfaceUrls: [String: JSONValue]?
            let snapshot: Snapshot?

            enum CodingKeys: String, CodingKey {
                case type, protocolVersion = "protocol", server, auth, policy, canvasHostUrl, pluginSurfaceUrls, snapshot
            }
            init(from decoder: Decoder) throws {
                let c = try decoder.container(keyedBy: CodingKeys.self)
                type = try c.decode(String.self, forKey: .type)
                protocolVersion = c.lenient(Int.self, .protocolVersion)
                server = c.lenient(Server.self, .server)
                auth = c.lenient(Auth.self, .auth)
                policy = c.lenient(Policy.self, .policy)
                canvasHostUrl = c.lenient(String.self, .canvasHostUrl)
                pluginSurfaceUrls = c.lenient([String: JSONValue].self, .pluginSurfaceUrls)
                snapshot = c.lenient(Snapshot.self, .snapshot)
            }

            struct Server: Decodable {
                let version: String?
                enum CodingKeys: String, CodingKey { case version }
                init(from decoder: Decoder) throws { version = try decoder.container(keyedBy: CodingKeys.self).lenient(String.self, .version) }
            }
            struct Auth: Decodable {
                let deviceToken: String?, scopes: [String]?, issuedAtMs: Int64?, deviceTokens: [JSONValue]?
                enum CodingKeys: String, CodingKey { case deviceToken, scopes, issuedAtMs, deviceTokens }
                init(from decoder: Decoder) throws {
                    let c = try decoder.container(keyedBy: CodingKeys.self)
                    deviceToken = c.lenient(String.self, .deviceToken)
                    scopes = c.lenient([JSONValue].self, .scopes)?.compactMap(\.stringValue)
                    issuedAtMs = c.lenient(Int64.self, .issuedAtMs)
                    deviceTokens = c.lenient([JSONValue].self, .deviceTokens)
                }
            }
            struct Policy: Decodable {
                let maxPayload: Int?, tickIntervalMs: Int?
                enum CodingKeys: String, CodingKey { case maxPayload, tickIntervalMs }
                init(from decoder: Decoder) throws {
                    let c = try decoder.container(keyedBy: CodingKeys.self)
                    maxPayload = c.lenient(Int.self, .maxPayload); tickIntervalMs = c.lenient(Int.self, .tickIntervalMs)
                }
            }
            struct Snapshot: Decodable {
                let sessionDefaults: SessionDefaults?
                enum CodingKeys: String, CodingKey { case sessionDefaults }
                init(from decoder: Decoder) throws {
                    sessionDefaults = try decoder.container(keyedBy: CodingKeys.self).lenient(SessionDefaults.self, .sessionDefaults)
                }
            }
            struct SessionDefaults: Decodable {
                let mainSessionKey: String?
                enum CodingKeys: String, CodingKey { case mainSessionKey }
                init(from decoder: Decoder) throws {
                    mainSessionKey = try decoder.container(keyedBy: CodingKeys.self).lenient(String.self, .mainSessionKey)
                }
            }
        }
    }

    /// One entry of `hello-ok.auth.deviceTokens`: `{deviceToken, role, scopes, issuedAtMs}`.
    public struct IssuedToken: Sendable, Equatable {
        public let token: String
        public let role: String
        public let scopes: [String]
        public let issuedAtMs: Int64?

        init?(_ v: JSONValue) {
            guard let w = try? JSONValueDecoder.decode(Wire.self, from: v), let t = w.deviceToken, !t.isEmpty,
                  let r = w.role, !r.isEmpty else { return nil }
            token = t; role = r
            scopes = w.scopes ?? []
            issuedAtMs = w.issuedAtMs
        }

        struct Wire: Decodable {
            let deviceToken: String?, role: String?, scopes: [String]?, issuedAtMs: Int64?
            enum CodingKeys: String, CodingKey { case deviceToken, role, scopes, issuedAtMs }
            init(from decoder: Decoder) throws {
                let c = try decoder.container(keyedBy: CodingKeys.self)
                deviceToken = c.lenient(String.self, .deviceToken); role = c.lenient(String.self, .role)
                scopes = c.lenient([JSONValue].self, .scopes)?.compactMap(\.stringValue)
                issuedAtMs = c.lenient(Int64.self, .issuedAtMs)
            }
        }
    }
}

extension KeyedDecodingContainer {
    /// A field the node reads leniently: nil when absent, null or of another type.
    func lenient<T: Decodable>(_ type: T.Type, _ key: Key) -> T? { (try? decodeIfPresent(type, forKey: key)) ?? nil }

    /// A field kept as it was sent: nil when absent, `.null` when null. (Not `contains ? decode : nil`,
    /// where the `nil` would become JSONValue's `.null`.)
    func raw(_ key: Key) throws -> JSONValue? {
        guard contains(key) else { return Optional<JSONValue>.none }
        return try decode(JSONValue.self, forKey: key)
    }
}
