import Kit
import Support

/// One `desktop.stream` invoke, start to end (docs/PROTOCOL.md "desktop.stream"): probe the local
/// VNC server, open the attach socket on the gateway, hand over the metadata frame, replay what the
/// probe read, check the gateway's version answer, then splice until either side closes. The
/// terminal result is `{"status":"closed"}`; every failure is UNAVAILABLE with upstream's text.
enum DesktopStream {
    static let nonBinary = DesktopStreamError.gateway("gateway sent non-binary desktop stream data")
    /// How long the gateway has for its part of the handshake once the attach socket is open.
    static let gatewayHandshakeTimeout: Duration = .seconds(10)

    struct Result: Encodable, Sendable { let status: String }

    /// What the blocking first half found: the server connection and how the gateway authenticates.
    private struct Target: @unchecked Sendable {  // handed from the probe's thread to the splice's, never shared
        let socket: RFBSocket
        let probe: RFBProbe
        let server: LocalVNCServer?
        let password: String?
        /// Where the stream leads, for the log ("x11vnc on :99", "127.0.0.1:5900").
        let name: String
    }

    static func run(_ params: DesktopStreamParams, settings: DesktopSettings, stateDirectory: String, link: GatewayLink?,
                    context: InvocationContext, cancel: CancelFlag, log: Logger) async throws(NodeError) -> Result {
        guard let link, await link.isConnected() else {
            throw DesktopStreamError.noGateway("the node is not connected to a gateway").nodeError
        }
        await context.duplex.write("probing local RFB server\n")
        let target: Target
        do {
            target = try await BlockingExecutor.run("desktop-probe") { (flag: CancelFlag) throws(DesktopStreamError) -> Target in
                try connect(settings, stateDirectory: stateDirectory, cancel: CancelFlag.either(flag, cancel), log: log)
            }
        } catch { throw error.nodeError }
        defer {
            target.socket.close()
            target.server?.stop()
        }
        let stream: any GatewayStream
        switch await link.openStream(params.attachPath) {
        case .success(let s): stream = s
        case .failure(let e): throw DesktopStreamError.gateway("desktop stream attach failed: \(e.message)").nodeError
        }
        defer { stream.close(code: 1000, reason: "desktop stream ended") }
        // Cancel (node.invoke.cancel, the node stopping, nobody at the device any more) closes the
        // attach socket, which ends every wait below.
        let watchdog = Task {
            try? await Task.sleep(for: gatewayHandshakeTimeout)
            if !Task.isCancelled { stream.close(code: 1008, reason: "RFB handshake timed out") }
        }
        let gatewayBytes = GatewayBytes(stream)
        do throws(DesktopStreamError) {
            try sendMetadata(target, to: stream)
            if target.server?.nodeChecksPassword == true {
                try await authenticateGateway(target, gatewayBytes, stream)
            } else {
                stream.send(binary: target.probe.banner + target.probe.securityBytes)
                guard try await gatewayBytes.read(exactly: 12) == target.probe.reply else {
                    throw .gateway("RFB client changed the inspected protocol version")
                }
            }
        } catch {
            watchdog.cancel()
            throw (cancel.isCancelled ? DesktopStreamError.cancelled : error).nodeError
        }
        watchdog.cancel()
        // From here an operator has the desktop: computer control steps back until the end.
        let claim = settings.shownDesktop.map(RemoteDesktopSessions.shared.begin)
        defer { claim.map(RemoteDesktopSessions.shared.end) }
        await context.duplex.write("desktop stream attached\n")
        log.info("desktop stream attached: \(target.name) → gateway (invoke \(context.invokeId))")
        let (end, totals) = await RFBSplice.run(server: target.socket, gateway: stream, pending: gatewayBytes.takeRest(), cancel: cancel)
        log.info("desktop stream ended (\(describe(end))): \(totals.toGateway) bytes to the gateway in \(totals.frames) messages (largest \(totals.largestFrame)), " +
                 "\(totals.toServer) bytes to the server" + (totals.pauses > 0 ? ", paused \(totals.pauses) times while 4 MiB waited for the gateway" : ""))
        switch end {
        case .serverClosed, .gatewayClosed: return Result(status: "closed")
        case .cancelled: throw DesktopStreamError.cancelled.nodeError
        case .failed(let e): throw e.nodeError
        }
    }

    /// The blocking half: the server (started, or the configured one), probed.
    private static func connect(_ s: DesktopSettings, stateDirectory: String, cancel: CancelFlag, log: Logger) throws(DesktopStreamError) -> Target {
        switch s.server {
        case .auto:
            let server = try LocalVNCServer.start(s, under: stateDirectory, cancel: cancel, log: log)
            do throws(DesktopStreamError) {
                let socket = try server.connect(cancel: cancel)
                let probe = try RFBProbe.run(socket, acceptNone: server.nodeChecksPassword, within: RFBProbe.freshServerTimeout, cancel: cancel)
                if !server.nodeChecksPassword && probe.auth != .vncPassword { throw DesktopStreamError.unsupportedSecurity(probe.offered) }
                return Target(socket: socket, probe: probe, server: server, password: server.password, name: "\(server.kind.rawValue) (pid \(server.pid))")
            } catch {
                server.stop()
                throw error
            }
        case .external:
            let socket: RFBSocket
            do {
                let addresses = try TCPSocket.resolve(host: "127.0.0.1", port: s.port)
                socket = RFBSocket(try TCPSocket.connect(addresses, timeout: RFBProbe.timeout))
            } catch { throw .serverUnavailable("nothing accepts connections at 127.0.0.1:\(s.port) (\(error.description)): start the VNC server or fix capabilities.desktop.port") }
            do throws(DesktopStreamError) {
                let probe = try RFBProbe.run(socket, acceptNone: false, cancel: cancel)
                var password: String?
                if probe.auth == .vncPassword {
                    guard let file = s.passwordFile else {
                        throw DesktopStreamError.configuration("the VNC server at 127.0.0.1:\(s.port) asks for a password: put it in a file (chmod 600) and name it in capabilities.desktop.passwordFile")
                    }
                    password = try PasswordFile.read(file)
                }
                return Target(socket: socket, probe: probe, server: nil, password: password, name: "127.0.0.1:\(s.port)")
            } catch {
                socket.close()
                throw error
            }
        }
    }

    /// The first binary frame: how the gateway is to authenticate (closed JSON, upstream's shape).
    private static func sendMetadata(_ t: Target, to stream: any GatewayStream) throws(DesktopStreamError) {
        let meta: JSONValue
        if t.probe.auth == .ardAccount { meta = ["auth": "ard-account"] }
        else if let pw = t.password { meta = ["auth": "vnc-password", "vncPassword": .string(pw)] }
        else { throw .configuration("desktop stream has no password for the VNC server") }
        guard stream.send(binary: meta.jsonBytes) else { throw .gateway("desktop stream attach socket closed before the metadata frame") }
    }

    /// wayvnc on the node's private socket offers no authentication: the node stands in as the
    /// server toward the gateway for the security phase (VNC authentication with this stream's
    /// password), then selects None with wayvnc and splices. RFC 6143 §7.1.2–§7.1.3.
    private static func authenticateGateway(_ t: Target, _ gw: GatewayBytes, _ stream: any GatewayStream) async throws(DesktopStreamError) {
        let v33 = t.probe.reply == Array("RFB 003.003\n".utf8), v38 = t.probe.reply == Array("RFB 003.008\n".utf8)
        stream.send(binary: t.probe.banner)
        guard try await gw.read(exactly: 12) == t.probe.reply else { throw .gateway("RFB client changed the inspected protocol version") }
        stream.send(binary: v33 ? [0, 0, 0, 2] : [1, 2])
        if !v33 {
            let choice = try await gw.read(exactly: 1)
            guard choice == [2] else { throw .gateway("the gateway chose RFB security type \(choice[0]), not VNC authentication") }
        }
        let challenge = SecureRandom.bytes(16)
        stream.send(binary: challenge)
        let answer = try await gw.read(exactly: 16)
        guard let password = t.password, VNCAuthentication.verify(challenge: challenge, answer: answer, password: password) else {
            let reason = Array("authentication failed".utf8)
            stream.send(binary: [0, 0, 0, 1] + (v38 ? [0, 0, 0, UInt8(reason.count)] + reason : []))
            throw .gateway("desktop stream: the gateway's answer to the VNC password challenge was wrong")
        }
        // Toward wayvnc: None, and (3.8) its SecurityResult, which the gateway then receives as ours.
        let deadline = ContinuousClock.now + RFBProbe.timeout, none = CancelFlag()
        if !v33 { try t.socket.write([1], until: deadline) }
        if v38 {
            let result = try t.socket.read(exactly: 4, until: deadline, cancel: none)
            guard result == [0, 0, 0, 0] else { throw .serverRefused("wayvnc refused security type None") }
        }
        stream.send(binary: [0, 0, 0, 0])
    }

    private static func describe(_ end: RFBSplice.End) -> String {
        switch end {
        case .serverClosed: return "the VNC server closed"
        case .gatewayClosed(let code, let reason): return "the gateway closed\(code.map { " with \($0)" } ?? "")\(reason.isEmpty ? "" : ": " + reason)"
        case .cancelled: return "cancelled"
        case .failed(let e): return e.nodeError.message
        }
    }
}
