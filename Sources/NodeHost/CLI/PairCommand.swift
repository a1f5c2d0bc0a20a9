import Config
import ControlLink
import DeviceInfo
import GatewaySession
import Kit
import NodeDaemon
import Store
import Support

/// `openclaw-node pair <setup code | oc-pair://… | join URL>`: pairs this node with the gateway a
/// pairing link names, in one command (docs/PROTOCOL.md §3.9).
enum PairCommand {
    static let help = """
        Usage: openclaw-node pair <setup-code | oc-pair://CODE | https://GATEWAY/j/CODE | -> [--display-name NAME]
                                  [--timeout SECONDS] [--json] [--config FILE]
               openclaw-node pair --from-file FILE [options]

        Pairs this node with an OpenClaw gateway from what the gateway handed out:
          - a setup code (`openclaw qr`, or the operator API's device.pair.setupCode),
          - the same as a link, oc-pair://<code>,
          - a one-time join URL (`openclaw devices join-code`), https://<gateway>/j/<code> — http only
            to this machine (loopback). It is fetched once; the gateway then forgets it.
        The payload is checked (gateway URL(s), expiry, TLS fingerprint), the gateway URL(s) and
        fingerprint are stored in the node's state database, and the node connects once with the
        payload's one-time bootstrap token, which is never stored. The device token the gateway
        issues is stored; from then on `openclaw-node run` connects with it — to the stored gateway
        when the config has no gateway.url. --display-name is the name the gateway records for
        this pairing (default: node.displayName). Waits up to --timeout seconds (default 60).
        Exit 0 when paired; 1 when the link is refused (expired, already used, malformed) or the
        gateway refuses the pairing, with the reason.
        The config's gateway.setupCode accepts the same three forms.
        `-` reads the code from standard input and --from-file from a file (its first line that is
        not empty or a # comment), so that cloud-init, Ansible or a script need not put the secret
        on a command line, where every account can read it in /proc.
        """

    static func main(_ args: [String], capabilities: @escaping CLI.CapabilityFactory) async throws -> Int32 {
        let a = try Arguments(args, valued: ["config", "display-name", "timeout", "from-file"], known: ["json"])
        if a.flag("help") { Out.line(help); return ExitCode.ok.rawValue }
        let link: String
        if let file = a.option("from-file") {
            guard a.positionals.isEmpty else { throw Arguments.Failure(description: "give the code either as an argument or with --from-file, not both") }
            guard let text = FileSystem.readText(file) else { throw Arguments.Failure(description: "--from-file \(file): cannot read it") }
            guard let first = firstCode(text) else { throw Arguments.Failure(description: "--from-file \(file): no setup code in it") }
            link = first
        } else {
            guard let given = a.positionals.first, a.positionals.count == 1 else {
                throw Arguments.Failure(description: "expected one setup code, oc-pair:// link or join URL (or - to read it from standard input)")
            }
            if given == "-" {
                guard let first = firstCode(String(decoding: FileSystem.read(0, upTo: 64 * 1024), as: UTF8.self)) else {
                    throw Arguments.Failure(description: "no setup code on standard input")
                }
                link = first
            } else {
                link = given
            }
        }
        let timeout = try a.option("timeout").map { t -> Int in
            guard let n = Int(t), n > 0 else { throw Arguments.Failure(description: "--timeout must be a positive number of seconds") }
            return n
        } ?? 60
        var config = try CLI.loadConfig(a)
        // The daemon's own config names a gateway: the pairing is stored, but that daemon keeps to its URL.
        let configuredURL = config.gateway.url
        let code: SetupCode
        do { code = try await PairingLink.resolve(link) } catch {
            return fail("\(error.description)", json: a.flag("json"))
        }
        if let name = a.option("display-name"), !name.trimmed().isEmpty { config.displayName = name.trimmed() }
        // Explicit flags > payload > saved config: the payload names the gateway.
        config.gateway.url = code.url
        config.gateway.setupCode = nil
        let store = try StateStore(stateDir: config.stateDir)
        try PairingLink.remember(code, store: store)
        let presence = NodeRuntime.presenceMonitor(config)
        let runtime = try await NodeRuntime(config: config, capabilities: try capabilities(config, presence), presence: presence)
        let identity = try runtime.store.identity()
        let status = GatewayStatus()
        let client: GatewayClient
        do {
            let info = (try? JSONValue.from(DeviceCapability(storagePath: config.stateDir).infoPayload())) ?? [:]
            client = try GatewayClient(config: config, store: runtime.store, identity: identity, dispatcher: runtime.dispatcher,
                                       deviceInfo: info, status: status, setupCode: code)
        } catch {
            await runtime.shutdown()
            return fail(error.description, json: a.flag("json"))
        }
        let run = Task { await client.run() }
        let end = await status.first(where: { s in
            switch s { case .connected, .paused, .stopped: return true; default: return false }
        }, timeout: .seconds(timeout))
        await client.stop()
        await run.value
        await runtime.shutdown()
        let key = await client.gatewayKey
        let reached = await client.url.absoluteString
        let hasToken = (try? runtime.store.deviceToken(gateway: key, role: "node")) != nil
        guard case .connected = end, hasToken else {
            let why: String
            switch end {
            case .paused(let p): why = p.reason + (p.remediationHint.map { " — gateway: \($0)" } ?? "")
            case .stopped(let w): why = w
            case .pendingApproval(let id, _):
                why = "the gateway wants an operator to approve this device (request \(id ?? "unknown")): run `openclaw devices approve \(id ?? "<requestId>")`, then `openclaw-node run`"
            default: why = "no pairing within \(timeout) s (\(await status.text))"
            }
            return fail(why, json: a.flag("json"))
        }
        let daemon = switchRunningDaemon(stateDir: config.stateDir, configuredURL: configuredURL, paired: code.url)
        if a.flag("json") {
            var o: [String: JSONValue] = ["ok": true, "runningDaemon": .string(daemon.state), "gateway": .string(code.url), "deviceId": .string(identity.deviceId),
                                          "displayName": .string(config.displayName), "deviceTokenStored": true,
                                          "bootstrapTokenStored": false, "database": .string(runtime.store.path)]
            if !code.urls.isEmpty { o["urls"] = .array(code.urls.map { .string($0) }) }
            o["reachedAt"] = .string(reached)
            if let fp = code.tlsFingerprint { o["tlsFingerprint"] = .string(fp) }
            if let e = code.expiresAtMs { o["expiresAtMs"] = .number(Double(e)) }
            Out.json(.object(o))
            return ExitCode.ok.rawValue
        }
        Out.line("Paired with \(code.url)\(reached == code.url ? "" : " (reached at \(reached))") as \(config.displayName) (device \(identity.deviceId.prefix(12))…).")
        if !code.urls.isEmpty { Out.line("Gateway URLs: \(code.urls.joined(separator: ", "))") }
        if let fp = code.tlsFingerprint { Out.line("TLS pin:      sha256:\(fp)") }
        Out.line("Stored in \(runtime.store.path): the gateway URL\(code.urls.isEmpty ? "" : "s")\(code.tlsFingerprint == nil ? "" : ", the TLS pin") and the device token; the one-time bootstrap token was not stored.")
        if let line = daemon.line { Out.line(line) } else {
            Out.line("Start the node: openclaw-node run (or systemctl enable --now openclaw-node). Its commands may still need `openclaw nodes approve` on the gateway.")
        }
        return ExitCode.ok.rawValue
    }

    /// A daemon that runs with this state directory starts a new session with the stored pairing,
    /// unless its config names another gateway (then it is told to the user, not overridden).
    static func switchRunningDaemon(stateDir: String, configuredURL: String?, paired: String) -> (state: String, line: String?) {
        guard let client = ControlClient.connect(stateDir: stateDir) else { return ("none", nil) }
        if let configuredURL, configuredURL != paired {
            return ("kept", "The running daemon keeps to gateway.url \(configuredURL) of its config; remove that key (or set it to \(paired)) and reload it (systemctl reload openclaw-node) to use this pairing.")
        }
        guard let reply = try? client.request(["op": "reconnect", "fresh": true]), reply["ok"]?.boolValue == true else {
            return ("unreachable", "A daemon runs with this state directory but did not take the new pairing; restart it (systemctl restart openclaw-node).")
        }
        return ("switched", "The running daemon started a new session with it (\(reply["reconnect"]?["connection"]?.stringValue ?? "connecting")).")
    }

    static func fail(_ why: String, json: Bool) -> Int32 {
        if json { Out.json(["ok": false, "error": .string(why)]) } else { Out.err("openclaw-node pair: \(why)") }
        return ExitCode.failure.rawValue
    }

    /// The lines of `text` that are not empty or a # comment, trimmed (a code file, standard input,
    /// a provisioning .txt).
    static func codeLines(_ text: String) -> [String] {
        text.split(whereSeparator: \.isNewline).map { $0.trimmed() }.filter { !$0.isEmpty && !$0.hasPrefix("#") }
    }

    static func firstCode(_ text: String) -> String? { codeLines(text).first }
}
