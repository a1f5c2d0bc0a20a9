import Config
import Glibc
import HostPresence
import Kit
import Registry
import Store
import Support
import Transport

/// Keeps the node connected to its gateway: picks the credential, connects, handles pairing and
/// auth refusals, persists the device token and TLS pin, and reconnects with backoff. Never a tight
/// loop; terminal refusals stop it with a message that says what to change.
///
/// The same loop runs the optional operator session (`session: .operator`): same device key, URL,
/// TLS pin and backoff, its own device token (tokens are per role), no invokes and no presence.
public actor GatewayClient {
    /// The address in use: the configured (or paired) URL, or another address a pairing link
    /// named for the same gateway (`urls`) once the ones before it could not be reached.
    public var url: WebSocketURL { urls[urlIndex] }
    /// The primary URL first, then the pairing link's other addresses. Tokens and the pin are the
    /// gateway's, kept under the primary's key whichever address answers.
    private let urls: [WebSocketURL]
    private var urlIndex = 0
    /// Addresses that could not be reached in a row: a full round of them waits for the backoff.
    private var unreachableInRound = 0
    /// Storage key for tokens and pins: scheme://host:port.
    public let gatewayKey: String
    private let config: NodeConfig
    private let store: StateStore
    private let identity: DeviceIdentity
    private let dispatcher: Dispatcher
    public let status: GatewayStatus
    public let session: GatewayProtocol.SessionRole
    /// Connect only with a stored device token of this role: when the gateway refuses it, stop
    /// instead of asking for an approval nobody opted into (an operator token from a setup code).
    private let onlyWithToken: Bool
    private let log: Logger
    private let setupCode: SetupCode?
    private var signatureVersion: DeviceAuthPayload.Version = .v3
    /// The reconnect decision and its state (ReconnectPolicy, docs/PROTOCOL.md §3.8).
    private var policy = ReconnectPolicy.fromEnvironment()
    /// Set while reconnecting is paused; `resume` ends the pause.
    private var pausedFor: GatewayStatus.Pause?
    private var pauseWake: CheckedContinuation<Void, Never>?
    private var resumeRequested = false
    /// The approval command was logged for a refusal without a request id.
    private var pairingLogged = false
    private var current: GatewayConnection?
    private var stopped = false
    /// Set by `reannounce`: the session it closes ends in an immediate reconnect, not a backoff.
    private var reannouncing = false
    private var lastLoggedRequestId: String?
    private let deviceInfo: JSONValue
    /// The TLS fingerprint a discovered gateway advertised (TXT gatewayTlsSha256): checked on the
    /// first connect only, never over a configured or stored pin (GatewayTrust).
    private let tlsHint: String?
    /// Lets tests and the benchmark observe connection milestones.
    private var onReady: (@Sendable (GatewayProtocol.HelloOk) -> Void)?
    private var onDisconnect: (@Sendable () -> Void)?
    private var onEvent: (@Sendable (String, JSONValue?) -> Void)?
    private var onPairResolved: (@Sendable (JSONValue) -> Void)?
    /// Interrupts a backoff wait (network change, stop).
    private var wake: CheckedContinuation<Void, Never>?
    /// The backoff wait's timer, and, from a pause for pairing, the watch for the operator's
    /// decision: stop cancels them.
    private var backoffTimer: Task<Void, Never>?
    private var pairingWatch: Task<Void, Never>?

    public struct ConfigError: Error, CustomStringConvertible { public let description: String }

    /// What tokens and pins are stored under: scheme://host:port.
    public static func key(scheme: String, host: String, port: Int?) -> String {
        "\(scheme)://\(host.lowercased()):\(port ?? (scheme == "wss" ? 443 : 80))"
    }

    public static func key(for url: WebSocketURL) -> String? {
        key(scheme: url.scheme, host: url.host, port: url.port)
    }

    /// nil URL and no setup code = nothing to connect to (`run` then uses discovery and passes the
    /// chosen gateway's URL in `config.gateway.url`, with its advertised fingerprint as `tlsHint`).
    public init(config: NodeConfig, store: StateStore, identity: DeviceIdentity, dispatcher: Dispatcher,
                deviceInfo: JSONValue, status: GatewayStatus = GatewayStatus(), tlsHint: String? = nil,
                session: GatewayProtocol.SessionRole = .node, onlyWithToken: Bool = false,
                setupCode resolved: SetupCode? = nil) throws(ConfigError) {
        // `resolved`: a pairing link already decoded or fetched (a join URL answers only once).
        var code = resolved
        if code == nil, let sc = config.gateway.setupCode {
            do { code = try SetupCode(decoding: sc) } catch { throw ConfigError(description: "gateway.setupCode: \(error.description)") }
        }
        guard let text = config.gateway.url ?? code?.url else {
            throw ConfigError(description: "no gateway: set gateway.url (or OPENCLAW_GATEWAY_URL) or gateway.setupCode")
        }
        guard let u = WebSocketURL(string: text), u.scheme == "ws" || u.scheme == "wss" else {
            throw ConfigError(description: "gateway.url \"\(text)\" is not a ws:// or wss:// URL (e.g. ws://127.0.0.1:18789)")
        }
        // The other addresses of the same gateway: the link's, or those `openclaw-node pair`
        // stored with the URL this config now uses.
        var others = code?.urls ?? []
        if code == nil, PairingLink.rememberedURL(store) == text { others = PairingLink.rememberedURLs(store) }
        var all = [u]
        for o in others {
            guard let alt = WebSocketURL(string: o), alt.scheme == "ws" || alt.scheme == "wss",
                  !all.contains(where: { $0.absoluteString == alt.absoluteString }) else { continue }
            all.append(alt)
        }
        self.urls = all
        self.gatewayKey = Self.key(scheme: u.scheme, host: u.host, port: u.port)
        self.config = config
        self.store = store
        self.identity = identity
        self.dispatcher = dispatcher
        self.status = status
        self.setupCode = code
        self.deviceInfo = deviceInfo
        self.tlsHint = tlsHint
        self.session = session
        self.onlyWithToken = onlyWithToken
        log = Logger(component: session.isNode ? "gateway" : "operator")
    }

    public func setOnReady(_ f: @escaping @Sendable (GatewayProtocol.HelloOk) -> Void) { onReady = f }
    /// Receives gateway events no one in the client handles (chat, voicewake.changed, …).
    public func setOnEvent(_ f: @escaping @Sendable (String, JSONValue?) -> Void) { onEvent = f }
    /// Observes the end of every session that reached hello-ok.
    public func setOnDisconnect(_ f: @escaping @Sendable () -> Void) { onDisconnect = f }
    /// Receives `node.pair.resolved` / `device.pair.resolved` (the connector hands them to every
    /// session of this device); unset, the client applies them to itself.
    public func setOnPairResolved(_ f: @escaping @Sendable (JSONValue) -> Void) { onPairResolved = f }

    public func stop() {
        stopped = true
        backoffTimer?.cancel()
        pairingWatch?.cancel()
        current?.ws.close(code: 1000, reason: "node stopping")
        wake?.resume()
        wake = nil
        pauseWake?.resume()
        pauseWake = nil
    }

    /// The node now serves other caps/commands than it declared (config reload). A gateway takes
    /// a node's caps, commands and permissions only in `connect` (no method updates them on a live
    /// session; the iOS and Android apps reconnect too), so close this session and connect again at
    /// once, with the same device token. New commands then wait for the operator's approval of
    /// the node's command surface (`openclaw nodes pending` / `approve`).
    public func reannounce() async {
        // Not in a session (connecting, or waiting to retry): the next connect declares the new list.
        guard let conn = current, await status.isConnected else { reconnectSoon(); return }
        reannouncing = true
        log.info("the node's command list changed; reconnecting so the gateway sees it")
        conn.ws.close(code: 1000, reason: "node command list changed")
    }

    /// Cuts a backoff wait short (network came back, resume from suspend).
    public func reconnectSoon() {
        policy.resetBackoff()
        wake?.resume()
        wake = nil
    }

    /// The network changed: check a live connection, or stop waiting and reconnect now.
    public func networkChanged() async {
        if let conn = current, await status.isConnected {
            _ = await conn.probe()
        } else {
            log.info("network changed; reconnecting now")
            reconnectSoon()
        }
    }

    /// The system resumed from suspend: announce the node (or reconnect if the link died meanwhile).
    public func systemResumed() async {
        log.info("system resumed from suspend")
        guard let conn = current, await status.isConnected else { reconnectSoon(); return }
        if await conn.probe(), session.isNode { await announcePresence(conn, trigger: "background") }
    }

    // MARK: the loop

    public func run() async {
        guard !stopped else { return }  // stopped before it ran: the status belongs to a newer client
        await status.set(.connecting(url.absoluteString))
        var gw = (try? store.gateway(gatewayKey)) ?? StateStore.GatewayRecord(gateway: gatewayKey, url: url.absoluteString)
        gw.url = url.absoluteString
        while !stopped {
            reannouncing = false  // only ever meant for the session it closed
            // The operator session follows the node's trust decisions: the pin the node stored
            // (read again before each attempt), never a first-use trust of its own.
            if !session.isNode, let stored = try? store.gateway(gatewayKey) { gw.tlsPin = stored.tlsPin }
            if url.scheme == "ws", config.gateway.tlsFingerprint != nil {
                await decide(.configuration("gateway.tlsFingerprint is set but \(url.absoluteString) is not a wss:// URL: a fingerprint pins a TLS certificate, so use wss://"),
                             record: &gw)
                continue
            }
            let credential = chooseCredential()
            let (options, trust) = connectOptions(stored: gw.tlsPin)
            await status.set(.connecting(url.absoluteString))
            let ws: WebSocketConnection
            do {
                ws = try await WebSocketConnection.connect(url, options: options)
            } catch {
                switch error.kind {
                case .pinMismatch where trust == .discoveryHint:
                    await decide(.configuration("the certificate of \(url.host) does not match the fingerprint its discovery record advertised " +
                                                "(gatewayTlsSha256 \(tlsHint ?? "")): refusing it, as the advertisement may be spoofed. If the " +
                                                "certificate is right, set gateway.tlsFingerprint to it (\(error.description))"), record: &gw)
                case .untrusted where !session.isNode && gw.tlsPin == nil && config.gateway.allowTOFU:
                    await decide(.transport("the gateway's certificate is not pinned yet; waiting for the node session to pin it"), record: &gw)
                case .pinMismatch, .insecureURL:
                    // Another address of the gateway must still pass the same check.
                    if nextAddress(after: error.description) { continue }
                    await decide(.configuration(error.description), record: &gw)
                default:
                    if nextAddress(after: "cannot reach it: \(error.description)") { continue }
                    await decide(.transport("cannot reach the gateway: \(error.description)"), record: &gw)
                }
                continue
            }
            if session.isNode, url.scheme == "wss", gw.tlsPin == nil, config.gateway.tlsFingerprint == nil, !ws.peerVerified, let fp = ws.peerFingerprint {
                gw.tlsPin = fp
                save(gw)
                log.warn("trusting \(url.host) on first use\(trust == .discoveryHint ? " (its certificate matches the fingerprint discovery advertised)" : ""): " +
                         "pinned its certificate sha256:\(fp); a different certificate will be refused")
            }
            let pairHook = onPairResolved
            let conn = GatewayConnection(ws: ws, log: log, onEvent: onEvent) { [weak self] payload in
                if let pairHook { pairHook(payload) } else { Task { await self?.pairResolved(payload) } }
            }
            current = conn
            let (name, model, manifest, id, version) = (config.displayName, deviceInfo["modelIdentifier"]?.stringValue,
                                                        dispatcher.registry.manifest, identity, signatureVersion)
            let locale = deviceInfo["locale"]?.stringValue ?? "en-US"
            let role = session
            let result = await conn.handshake(timeout: .seconds(15)) { nonce in
                try GatewayProtocol.connectParams(.init(
                    displayName: name, modelIdentifier: model, manifest: manifest, credential: credential, identity: id,
                    nonce: nonce, signedAtMs: WallClock.milliseconds, signatureVersion: version, locale: locale,
                    session: role))
            }
            switch result {
            case .ready(let hello):
                await serve(conn, hello: hello, credential: credential, record: &gw)
            case .rejected(let e):
                if await handleRefusal(e, conn: conn, credential: credential, record: &gw) { current = nil; return }
            case .malformed(let why):
                ws.close()
                await decide(.malformed("handshake failed: \(why)"), record: &gw)
            case .failed(let why):
                ws.close()
                await decide(.transport("handshake failed: \(why)"), record: &gw)
            }
            current = nil
        }
        await status.set(.idle("stopped"))
    }

    private func serve(_ conn: GatewayConnection, hello: GatewayProtocol.HelloOk, credential: GatewayProtocol.Credential,
                       record gw: inout StateStore.GatewayRecord) async {
        if let token = hello.deviceToken {
            do {
                try store.saveDeviceToken(gateway: gatewayKey, .init(token: token, role: session.role, scopes: hello.deviceTokenScopes, issuedAtMs: hello.issuedAtMs))
            } catch { log.error("could not store the device token: \(error)") }
        }
        keepBootstrapTokens(hello, credential: credential)
        let wasPending = session.isNode ? gw.pairingState != .paired : lastLoggedRequestId != nil
        gw.pairingState = .paired
        gw.pairingRequestId = nil
        gw.lastError = nil
        gw.lastSeenMs = StateStore.nowMs()
        save(gw)
        lastLoggedRequestId = nil
        pairingLogged = false
        unreachableInRound = 0
        policy.connected()
        await status.setHello(hello)
        await status.set(.connected(url: url.absoluteString, serverVersion: hello.serverVersion))
        log.info("connected to \(url.absoluteString) as \(identity.deviceId.prefix(12))… with \(credential.kind)\(wasPending ? " (paired)" : "")" +
                 "; tick \(hello.tickIntervalMs) ms, max payload \(hello.maxPayload) bytes")
        onReady?(hello)
        if session.isNode { Task { await self.announcePresence(conn, trigger: "connect") } }
        let end = await conn.serve(tickIntervalMs: hello.tickIntervalMs, nodeId: identity.deviceId,
                                   dispatcher: session.isNode ? dispatcher : nil,
                                   hostStats: session.isNode ? HostStatsReporter(stateDirectory: config.stateDir) : nil,
                                   skills: session.isNode ? SkillsPublisher(skills: .shared, protocolVersion: hello.protocolVersion) : nil)
        onDisconnect?()
        gw.lastSeenMs = StateStore.nowMs()
        save(gw)
        if stopped { return }
        if reannouncing { reannouncing = false; return }
        let reason = "disconnected (\(end.code.map(String.init) ?? "-") \(end.reason))"
        if let ms = end.restartExpectedMs {
            await wait(reason + "; the gateway said it restarts", for: .milliseconds(max(500, min(ms, 120_000))))
        } else {
            await decide(.transport(reason), record: &gw)
        }
    }

    /// After `url` failed (`why`): moves on to the gateway's next address. True when that one has
    /// not been tried in this round, so it is tried at once; false when every address failed in a
    /// row, and the reconnect decision (backoff, or a pause) comes first.
    private func nextAddress(after why: String) -> Bool {
        guard urls.count > 1 else { return false }
        let failed = url
        urlIndex = (urlIndex + 1) % urls.count
        unreachableInRound += 1
        guard unreachableInRound < urls.count else {
            unreachableInRound = 0
            return false
        }
        log.info("\(failed.absoluteString): \(why); trying \(url.absoluteString), another address the pairing link named for this gateway")
        return true
    }

    /// A refused `connect`: the same attempt's fallbacks first, then the reconnect decision.
    /// Returns true when the loop must end for good.
    private func handleRefusal(_ e: GatewayProtocol.GatewayError, conn: GatewayConnection, credential: GatewayProtocol.Credential,
                               record gw: inout StateStore.GatewayRecord) async -> Bool {
        var usedDeviceToken = false
        if case .deviceToken = credential { usedDeviceToken = true }
        switch AuthFailurePolicy.fallback(e, signatureVersion: signatureVersion, usedDeviceToken: usedDeviceToken) {
        case .retryWithV2Signature?:
            conn.ws.close()
            log.info("the gateway did not accept a v3 device signature; retrying with v2")
            signatureVersion = .v2
            return false
        case .dropDeviceToken?:
            conn.ws.close()
            try? store.deleteDeviceToken(gateway: gatewayKey, role: session.role)
            if onlyWithToken {
                await halt("the gateway no longer accepts the operator token the setup code handed over (dropped it); " +
                           "the capabilities that used it go on over the node session. To ask for an operator approval instead, " +
                           "set the capability's operator option (openclaw-node config reference)",
                           record: &gw)
                return true
            }
            log.warn("the gateway no longer accepts the stored device token; dropping it and retrying with the configured credential")
            return false
        case nil:
            // A newest gateway may keep the socket open after a pairing refusal and push the
            // operator's decision on it: the pause then listens there.
            let waits = ConnectErrorDetails(e.details).waitForResolution
            if !waits { conn.ws.close() }
            await decide(.gateway(e), record: &gw, pairingSocket: waits ? conn : nil)
            if waits { conn.ws.close() }
            return false
        }
    }

    /// Carries out the reconnect decision for one failure: waits the delay it names, or pauses
    /// until `resume` (approval, SIGHUP, config change, `openclaw-node reconnect`).
    private func decide(_ failure: ConnectFailure, record gw: inout StateStore.GatewayRecord,
                        pairingSocket: GatewayConnection? = nil) async {
        guard !stopped else { return }
        let hasToken = (try? store.deviceToken(gateway: gatewayKey, role: session.role)) != nil
        let trusted = url.scheme == "wss" || ResolvedAddress.isLoopback(url.host)
        let action = policy.afterFailure(failure, storedDeviceToken: hasToken && trusted)
        let refusal: GatewayProtocol.GatewayError? = { if case .gateway(let e) = failure { return e }; return nil }()
        let pairing = refusal.flatMap { ConnectErrorDetails.detailCode($0) == "PAIRING_REQUIRED" ? PairingRequest($0.details) : nil }
        switch action {
        case .keepSession:
            return
        case .retryWithStoredDeviceToken(let delay):
            log.info("gateway refused the credential (\(refusal.map(\.description) ?? "?")) and suggests the device token; " +
                     "retrying once with the stored device token in \(delay.milliseconds) ms")
            await wait("retrying with the stored device token", for: delay, quiet: true)
        case .pause(let p):
            await pause(p, refusal: refusal, record: &gw, pairingSocket: pairingSocket)
        case .retry(let delay, let fromGateway):
            if let pairing {
                notePendingApproval(pairing, record: &gw)
                await status.set(.pendingApproval(requestId: pairing.requestId, remediationHint: pairing.remediationHint))
                await wait("pending approval (request \(pairing.requestId ?? "unknown"))", for: delay, quiet: true)
                return
            }
            let reason: String
            switch failure {
            case .gateway(let e): reason = "gateway refused: \(e)\(AuthFailurePolicy.advice(e).map { " (\($0))" } ?? "")"
            case .transport(let why), .malformed(let why), .configuration(let why): reason = why
            case .sessionRequest(let m): reason = "request \(m) failed"
            }
            await wait(reason + (fromGateway ? " (the gateway asked to wait)" : ""), for: delay)
        }
    }

    /// Logs the approval command once per request id and records the pending request.
    private func notePendingApproval(_ p: PairingRequest, record gw: inout StateStore.GatewayRecord) {
        gw.pairingState = .pending
        gw.pairingRequestId = p.requestId
        gw.lastError = nil
        save(gw)
        guard !pairingLogged || p.requestId != lastLoggedRequestId else { return }
        pairingLogged = true
        lastLoggedRequestId = p.requestId
        let id = p.requestId ?? "<requestId>"
        let hint = p.remediationHint.map { "\n  gateway says: \($0)" } ?? ""
        if session.isNode {
            log.warn("this node is waiting for approval (request \(p.requestId ?? "unknown")). On the gateway host run:\n" +
                     "    openclaw devices approve \(id)\n" +
                     "  then, if the gateway asks for it, approve the node's commands: openclaw nodes approve <id>" + hint)
        } else {
            log.warn("the operator session (for the capabilities that call operator methods) is waiting for approval of this device as an " +
                     "operator with \(session.scopes.joined(separator: ", ")) (request \(p.requestId ?? "unknown")). On the gateway host run:\n" +
                     "    openclaw devices approve \(id)\n" +
                     "  Until then those capabilities do without it (over the node session)." + hint)
        }
    }

    /// Stops retrying until `resume`: says why in the log, in `status` and in the stored record
    /// (which `doctor` reads), with the pairing request and the gateway's hint.
    private func pause(_ p: ReconnectPause, refusal: GatewayProtocol.GatewayError?, record gw: inout StateStore.GatewayRecord,
                       pairingSocket: GatewayConnection?) async {
        let why: String, kind: String
        var requestId: String?, hint: String?
        switch p {
        case .pairing(let req):
            kind = "pairing"
            requestId = req.requestId
            hint = req.remediationHint
            why = "the gateway requires an operator's approval of this device (\(req.reason?.rawValue ?? "pairing required")" +
                "\(req.requestId.map { ", request \($0)" } ?? "")): run `openclaw devices approve \(req.requestId ?? "<requestId>")` on the gateway host"
            notePendingApproval(req, record: &gw)
        case .authentication(let code):
            kind = "authentication"
            why = "the gateway refused the login (\(code)\(refusal.map { ": \($0.message)" } ?? ""))" +
                (refusal.flatMap(AuthFailurePolicy.advice).map { "; \($0)" } ?? "")
            hint = refusal.flatMap { PairingRequest($0.details).remediationHint }
            gw.pairingState = .error
        case .protocolMismatch(let code):
            kind = "protocol"
            why = code.map { c in "protocol mismatch (\(c))" + (refusal.flatMap(AuthFailurePolicy.advice).map { ": \($0)" } ?? "") }
                ?? "the gateway does not speak the protocol as expected (a malformed challenge or reply)"
            gw.pairingState = gw.pairingState == .paired ? .paired : .error
        case .configuration(let text):
            kind = "configuration"
            why = text
            if gw.pairingState == .unknown { gw.pairingState = .error }
        }
        let line = "\(why)\(p.detailCode.map { " [\($0)]" } ?? "")"
        gw.lastError = "reconnect paused: \(line)\(hint.map { " — gateway: \($0)" } ?? "")"
        save(gw)
        let record = GatewayStatus.Pause(kind: kind, reason: line, detailCode: p.detailCode, requestId: requestId,
                                         remediationHint: hint, sinceMs: StateStore.nowMs())
        log.error("reconnect paused for \(url.absoluteString): \(line)\(hint.map { "\n  gateway says: \($0)" } ?? "")\n  " +
                  "It \(GatewayStatus.Pause.resumeHint).")
        await status.set(.paused(record))
        pausedFor = record
        if let pairingSocket {
            pairingWatch = Task { [weak self] in
                if let decision = await pairingSocket.pairingResolution() { await self?.pairResolved(decision) }
            }
        }
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            if stopped || resumeRequested { c.resume(); return }
            pauseWake = c
        }
        resumeRequested = false
        pausedFor = nil
        if !stopped { await status.set(.connecting(url.absoluteString)) }
    }

    /// Ends a pause (or a backoff wait) now. `why` goes to the log. True when it was paused.
    @discardableResult
    public func resume(_ why: String) -> Bool {
        guard let p = pausedFor else { reconnectSoon(); return false }
        log.info("resuming the paused reconnect (\(p.detailCode ?? p.kind)): \(why)")
        policy.connected()  // a person acted: the backoff and the device-token retry start over
        resumeRequested = true
        pauseWake?.resume()
        pauseWake = nil
        return true
    }

    /// `node.pair.resolved` / `device.pair.resolved`, from any session of this device: an
    /// approval naming this device or its paused request resumes it; a rejection says so.
    public func pairResolved(_ payload: JSONValue) async {
        guard let p = pausedFor, p.kind == "pairing" else { return }
        let rid = payload["requestId"]?.stringValue
        let who = payload["deviceId"]?.stringValue ?? payload["nodeId"]?.stringValue
        guard (rid != nil && rid == p.requestId) || who == identity.deviceId || (rid == nil && who == nil) else { return }
        let decision = payload["decision"]?.stringValue ?? "?"
        if decision == "approved" {
            resume("the gateway reports the pairing request \(rid ?? "") approved")
        } else {
            log.warn("the gateway reports the pairing request \(rid ?? "") \(decision); staying paused")
            let record = GatewayStatus.Pause(kind: p.kind, reason: "the pairing request was \(decision) on the gateway", detailCode: p.detailCode,
                                             requestId: p.requestId, remediationHint: p.remediationHint, sinceMs: p.sinceMs)
            pausedFor = record
            await status.set(.paused(record))
        }
    }

    /// Ends the loop for good (nothing resumes it but a new client).
    private func halt(_ why: String, record gw: inout StateStore.GatewayRecord) async {
        gw.lastError = why
        if gw.pairingState == .unknown { gw.pairingState = .error }
        save(gw)
        log.error("not connecting to \(url.absoluteString) any more: \(why)")
        await status.set(.stopped(why))
        stopped = true
    }

    private func announcePresence(_ conn: GatewayConnection, trigger: String) async {
        var payload: [String: JSONValue] = [
            "trigger": .string(trigger), "sentAtMs": .number(Double(StateStore.nowMs())),
            "displayName": .string(config.displayName), "version": .string(NodeVersion.version),
            "platform": .string(GatewayProtocol.platform), "deviceFamily": .string(GatewayProtocol.deviceFamily),
        ]
        if let m = deviceInfo["modelIdentifier"]?.stringValue, m != "unknown" { payload["modelIdentifier"] = .string(m) }
        guard let reply = await conn.sendEvent("node.presence.alive", payload: .object(payload)) else { return }
        if reply["handled"]?.boolValue == true {
            log.debug("presence recorded by the gateway (\(reply["reason"]?.stringValue ?? ""))")
        } else {
            log.info("gateway acknowledged node.presence.alive without recording it (\(reply["reason"]?.stringValue ?? "older gateway"))")
        }
    }

    /// Calls a gateway method on the live connection: its payload, or why not (UNAVAILABLE with
    /// "not connected" when there is no session).
    public func call(_ method: String, params: JSONValue, timeout: Duration) async -> Result<JSONValue, GatewayProtocol.GatewayError> {
        guard let conn = current, await status.isConnected else {
            return .failure(.init(["code": .string(NodeError.Code.unavailable.rawValue), "message": .string("the \(session.role) session is not connected")]))
        }
        return await conn.call(method, params: params, timeout: timeout)
    }

    /// Opens a bundle's stream socket on the live session's gateway (GatewayStreamSocket).
    public func openStream(_ pathAndQuery: String) async -> Result<any GatewayStream, NodeError> {
        guard let conn = current, await status.isConnected else {
            return .failure(NodeError(.unavailable, "the \(session.role) session is not connected"))
        }
        return await GatewayStreamSocket.open(pathAndQuery, session: conn.ws, allowInsecurePublic: config.gateway.allowInsecure)
    }

    /// Calls a gateway method on the live connection; nil when not connected or refused.
    public func request(_ method: String, params: JSONValue) async -> JSONValue? {
        guard let conn = current, await status.isConnected else { return nil }
        return await conn.request(method, params: params)
    }

    /// Sends a node event on the live connection; nil when not connected or not accepted.
    public func sendEvent(_ event: String, payload: JSONValue) async -> JSONValue? {
        guard let conn = current, await status.isConnected else { return nil }
        return await conn.sendEvent(event, payload: payload)
    }


    // MARK: helpers

    /// §2.7: stored device token → setup-code bootstrap token → shared token → password. The
    /// bootstrap token is single-use and for the node session; the operator session gets its token
    /// from it (deviceTokens) or from an approved role upgrade asked for with the shared credential.
    private func chooseCredential() -> GatewayProtocol.Credential {
        if let t = try? store.deviceToken(gateway: gatewayKey, role: session.role) { return .deviceToken(t.token) }
        if session.isNode, let b = setupCode?.bootstrapToken { return .bootstrapToken(b) }
        if let t = config.gateway.token, !t.isEmpty { return .token(t) }
        if let p = config.gateway.password, !p.isEmpty { return .password(p) }
        return .none
    }

    /// A setup-code bootstrap may hand over tokens for further roles (a bounded operator token).
    /// They are kept only when the bootstrap went over a transport nobody can read: TLS, or
    /// loopback on this machine.
    private func keepBootstrapTokens(_ hello: GatewayProtocol.HelloOk, credential: GatewayProtocol.Credential) {
        guard case .bootstrapToken = credential, !hello.extraDeviceTokens.isEmpty else { return }
        guard url.scheme == "wss" || ResolvedAddress.isLoopback(url.host) else {
            log.warn("the gateway handed over \(hello.extraDeviceTokens.count) further device token(s) on an unencrypted connection; not keeping them")
            return
        }
        for t in hello.extraDeviceTokens where t.role != session.role {
            do {
                try store.saveDeviceToken(gateway: gatewayKey, .init(token: t.token, role: t.role, scopes: t.scopes, issuedAtMs: t.issuedAtMs))
                log.info("kept the \(t.role) token the setup code handed over (\(t.scopes.joined(separator: ", ")))")
            } catch { log.error("could not store the \(t.role) token: \(error)") }
        }
    }

    private func connectOptions(stored pin: String?) -> (WebSocketOptions, GatewayTrust.Source) {
        var o = WebSocketOptions()
        o.maxMessageBytes = GatewayProtocol.decoderLimitBeforeHello
        o.allowInsecurePublic = config.gateway.allowInsecure
        let (policy, source) = GatewayTrust.policy(configured: config.gateway.tlsFingerprint, stored: pin,
                                                   hint: url.scheme == "wss" ? tlsHint : nil,
                                                   allowTOFU: config.gateway.allowTOFU && session.isNode)
        o.tls = policy
        if let ca = ProcessEnvironment.current["OPENCLAW_NODE_CA_FILE"] { o.caFile = ca }
        return (o, source)
    }

    private func save(_ gw: StateStore.GatewayRecord) {
        // The stored record (pairing state, last error, TLS pin) describes the node session; the
        // operator session reports through its own status and follows the node's pin.
        guard session.isNode else { return }
        do { try store.saveGateway(gw) } catch { log.error("could not save gateway state: \(error)") }
    }

    private func wait(_ reason: String, for delay: Duration, quiet: Bool = false) async {
        guard !stopped else { return }
        if !quiet { log.info("\(reason); retrying in \((Double(delay.milliseconds) / 1000).fixed(1)) s") }
        if !quiet { await status.set(.waiting(reason: reason, retryInMs: delay.milliseconds)) }
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            wake = c
            backoffTimer = Task { [weak self] in
                // Cancelled: the wait was ended early (or the client stopped); a late wake-up
                // would end the next wait instead.
                do { try await Task.sleep(for: delay) } catch { return }
                await self?.wakeUp()
            }
        }
        backoffTimer?.cancel()
        backoffTimer = nil
    }

    private func wakeUp() {
        wake?.resume()
        wake = nil
    }
}
