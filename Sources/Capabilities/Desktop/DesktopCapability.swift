import Config
import Kit
import Support

/// `desktop`: desktop.stream, the local desktop in the gateway's Control UI as a VNC (RFB) session
/// through a second WebSocket (DesktopStream). Off by default: it hands an operator the screen,
/// keyboard and mouse.
final class DesktopCapability: Capability, CapabilityLifecycle, GatewaySessionAware, PresenceAware, SelfDiagnosing, ReportsBackend, @unchecked Sendable {  // `link` is behind a lock
    let manifest: BundleManifest
    private let settings: DesktopSettings
    private let stateDirectory: String
    private let link = Locked<GatewayLink?>(nil)
    private let streams = ActiveStreams()
    private let keepAwake: any KeepAwake
    private let log = Logger(component: "desktop")

    init(context: CapabilityContext) {
        manifest = context.manifest
        keepAwake = context.keepAwake
        settings = DesktopSettings(context.section, environment: context.environment)
        stateDirectory = context.stateDirectory
    }

    var handlers: [CommandHandler] { [
        CommandHandler("desktop.stream", params: DesktopStreamParams.self) { [self] (p: DesktopStreamParams, c: InvocationContext) async throws(NodeError) -> DesktopStream.Result in
            let cancel = streams.add(c.invokeId)
            // The screen an operator is watching must not blank or the machine sleep under them.
            let awake = keepAwake.hold("desktop stream")
            defer { awake.release() }
            let outcome = await withTaskCancellationHandler { () async -> Result<DesktopStream.Result, NodeError> in
                do throws(NodeError) {
                    return .success(try await DesktopStream.run(p, settings: settings, stateDirectory: stateDirectory, link: link.withLock { $0 },
                                                                context: c, cancel: cancel, log: log))
                } catch { return .failure(error) }
            } onCancel: { cancel.cancel() }
            // Ended by presence or shutdown: say so instead of a bare "cancelled".
            if let why = streams.remove(c.invokeId), case .failure = outcome { throw why }
            return try outcome.get()
        },
    ] }

    func availability() async -> Availability {
        if settings.server == .auto, case .failure(let why) = LocalVNCServer.choose(settings) { return .unavailable(why.nodeError.message) }
        return .available
    }

    func shutdown() async {
        if streams.endAll(NodeError(.unavailable, "the node is stopping: the desktop stream ended")) > 0 {
            if await streams.waitUntilEmpty(within: .seconds(5)) { log.info("the node is stopping: desktop streams ended") }
            else { log.warn("the node is stopping: a desktop stream did not end within 5 s") }
        }
    }

    func gatewayConnected(_ link: GatewayLink) async { self.link.withLock { $0 = link } }

    func presenceChanged(foreground: Bool) async {
        guard !foreground else { return }
        let n = streams.endAll(NodeError(.backgroundUnavailable, "desktop.stream needs someone at the device, and presence became background: " +
                                         "the stream ended. Run `openclaw-node presence foreground` or change presence.mode"))
        if n > 0 { log.info("nobody is at the device any more (locked or idle): ended \(n) desktop stream(s)") }
    }

    /// For caps: the server a stream would use.
    func backend() async -> String? {
        switch settings.server {
        case .auto: return (try? LocalVNCServer.choose(settings).get()).map { "server auto: \(Self.describe($0.0, $0.1, $0.2))" }
        case .external: return "server external: the VNC server you run at 127.0.0.1:\(settings.port)"
        }
    }

    private static func describe(_ kind: LocalVNCServer.Kind, _ exe: String, _ target: String) -> String {
        switch kind {
        case .wayvnc: return "wayvnc (\(exe)) for the compositor at \(target), on a private Unix socket; the node checks the gateway's VNC password itself"
        case .x11vnc: return "x11vnc (\(exe)) for X display \(target), on a private Unix socket with a fresh password per stream"
        case .gnome: return "the node's own RFB server for GNOME (Mutter's screen cast and RemoteDesktop), listening nowhere; the node checks the gateway's VNC password itself"
        case .kde: return "the node's own RFB server for KDE Plasma (KWin's screenshots and fake input) at \(target), listening nowhere; the node checks the gateway's VNC password itself"
        }
    }

    func diagnose() async -> [Diagnosis] {
        switch settings.server {
        case .auto:
            switch LocalVNCServer.choose(settings) {
            case .success(let (kind, exe, target)):
                let forced = settings.backend == .auto ? "" : " (capabilities.desktop.backend \"\(settings.backend.rawValue)\")"
                return [Diagnosis(.ok, "desktop.stream would start \(Self.describe(kind, exe, target))\(forced)")]
            case .failure(let why):
                return [Diagnosis(.fail, why.nodeError.message)]
            }
        case .external:
            var out = [Diagnosis(.ok, "desktop.stream uses the VNC server you run at 127.0.0.1:\(settings.port) (server: external)")]
            if let file = settings.passwordFile {
                do { _ = try PasswordFile.read(file); out.append(Diagnosis(.ok, "its password comes from \(file)")) }
                catch { out.append(Diagnosis(.fail, error.nodeError.message)) }
            } else {
                out.append(Diagnosis(.warn, "capabilities.desktop.passwordFile is not set: a server that asks for a VNC password cannot be streamed, and one that asks for none is refused"))
            }
            return out
        }
    }
}
