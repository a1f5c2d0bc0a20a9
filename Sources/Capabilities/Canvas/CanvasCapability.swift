import Config
import Glibc
import Kit
import Media
import Support

/// canvas.* on a Chromium page driven over the DevTools pipe (headless, or a kiosk window on an
/// X display), with the built-in scaffold page and the A2UI renderer of the gateway's canvas host.
/// Headless, the browser starts on the first canvas command; in window mode it is up from the
/// daemon's start. On connect to a gateway with a canvas host, a running canvas that shows the
/// scaffold switches to the gateway's A2UI page. A browser that died is restarted on next use.
public struct CanvasCapability: Capability, CapabilityLifecycle, GatewaySessionAware, SelfDiagnosing {
    public let manifest: BundleManifest
    public var handlers: [CommandHandler] { CanvasCommands.handlers(self) }
    let session: CanvasSession
    private let log = Logger(component: "canvas")

    public init(context: CapabilityContext) {
        self.init(manifest: context.manifest,
                  settings: CanvasSettings(context.section, stateDirectory: context.stateDirectory, environment: context.environment),
                  keepAwake: context.keepAwake)
        // FFmpeg's libraries (scaling, video) are Media's, shared by every bundle: one node-wide period.
        IdleLibraryRelease.after = context.releaseIdleLibrariesAfter
    }

    init(manifest: BundleManifest, settings: CanvasSettings, keepAwake: any KeepAwake = NoKeepAwake()) {
        self.manifest = manifest
        session = CanvasSession(settings: settings, log: log, keepAwake: keepAwake)
    }

    public func availability() async -> Availability {
        switch session.settings.browserOptions {
        case .success: return .available
        case .failure(let e): return .unavailable(e.message)
        }
    }

    /// Window mode needs an X display to open; availability() already names the browser (or what
    /// to install).
    public func diagnose() async -> [Diagnosis] {
        let s = session.settings
        // What the gateway does with the canvas, said plainly: upstream moved it to macOS nodes.
        var out = [Diagnosis(.warn, "gateways from 2026.8 on route canvas to macOS nodes only and no longer have canvas.eval, canvas.snapshot or canvas.a2ui.* (upstream PR #126030); this canvas serves older gateways, and `openclaw nodes invoke --command canvas.…` of a command in the gateway's gateway.nodes.commands.allow")]
        guard s.window else { return out }
        guard let display = s.display else {
            out.append(Diagnosis(.fail, "window: true but no X display (set capabilities.canvas.display, e.g. \":0\")"))
            return out
        }
        out.append(Diagnosis(.ok, "kiosk window on display \(display)"))
        return out
    }

    func present(_ p: CanvasPresentParams, _ context: InvocationContext) async throws(NodeError) -> NullResult {
        try await session.present(url: p.url, placement: p.placement, deadline: context.deadline)
        return NullResult()
    }

    func hide(_ context: InvocationContext) async throws(NodeError) -> NullResult {
        try await session.hide()
        return NullResult()
    }

    func navigate(_ p: CanvasNavigateParams, _ context: InvocationContext) async throws(NodeError) -> NullResult {
        try await session.navigate(p.url, deadline: context.deadline)
        return NullResult()
    }

    func eval(_ p: CanvasEvalParams, _ context: InvocationContext) async throws(NodeError) -> CanvasEvalResult {
        guard let js = p.source else { throw NodeError.invalidRequest("javaScript required") }
        return CanvasEvalResult(result: try await session.eval(js, deadline: context.deadline))
    }

    func snapshot(_ p: CanvasSnapshotParams, _ context: InvocationContext) async throws(NodeError) -> CanvasSnapshotResult {
        let format = p.formatName
        let data = try await session.snapshot(format: format, maxWidth: p.maxWidth, quality: p.jpegQuality,
                                              budget: context.payloadBudget, deadline: context.deadline)
        return CanvasSnapshotResult(format: format, base64: Base64.encode(data))
    }

    /// canvas.a2ui.push takes `messages` or `jsonl`; the legacy pushJSONL only `jsonl`. The result
    /// is what the A2UI page answers (free-form).
    func a2uiPush(_ p: CanvasA2UIPushParams, jsonlOnly: Bool, _ context: InvocationContext) async throws(NodeError) -> JSONValue {
        let messages = try A2UIMessages.from(messages: jsonlOnly ? nil : p.messages, jsonl: p.jsonl)
        return try await session.a2ui(A2UIMessages.pushScript(messages), deadline: context.deadline)
    }

    func a2uiReset(_ context: InvocationContext) async throws(NodeError) -> JSONValue {
        try await session.a2ui(A2UIMessages.resetScript, deadline: context.deadline)
    }

    public func gatewayConnected(_ link: GatewayLink) async { await session.connected(link) }

    /// A kiosk window is up from boot, showing the scaffold until an agent or gateway replaces it.
    /// Window mode: the kiosk window is up from the daemon's start, and kept up.
    public func start() async -> Availability { await session.superviseWindow(); return .available }

    public func shutdown() async { await session.shutdown() }
}
