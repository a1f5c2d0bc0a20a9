import Config
import Glibc
import Kit
import Media
import Support

/// screen.snapshot and screen.record on X11 (MIT-SHM, XGetImage fallback, RandR monitors, XFixes
/// cursor) or the Linux framebuffer. The work runs on a dedicated thread per invoke. The last
/// grabber is kept warm between invokes (GrabberCache) and re-validated before reuse, so an X
/// server restart or a mode change between invokes only costs a reconnect.
public struct ScreenCapability: Capability, CapabilityLifecycle, SelfDiagnosing, ReportsBackend {
    public let manifest: BundleManifest
    public var handlers: [CommandHandler] { ScreenCommands.handlers(self) }
    let sources: ScreenSources
    let cache = GrabberCache()
    private let log = Logger(component: "screen")

    public init(context: CapabilityContext) {
        self.init(manifest: context.manifest, settings: ScreenSettings(context.section, environment: context.environment,
                                                                            stateDirectory: context.stateDirectory))
        // FFmpeg's libraries (scaling, video) are Media's, shared by every bundle: one node-wide period.
        IdleLibraryRelease.after = context.releaseIdleLibrariesAfter
    }

    init(manifest: BundleManifest, settings: ScreenSettings) {
        self.manifest = manifest
        sources = ScreenSources(settings: settings)
    }

    public func availability() async -> Availability {
        let sources = self.sources
        let result = try? await BlockingExecutor.run("screen.probe") { (_: CancelFlag) throws(NodeError) -> Availability in
            sources.probe()
        }
        if result == .available, let wayland = sources.settings.wayland, sources.settings.backend == .x11 {
            log.warn("Wayland session (\(wayland)): capturing X display \(sources.settings.display ?? "?") shows only X11 " +
                     "(XWayland) windows; use backend \"wayland\" or \"auto\" on a wlroots compositor")
        }
        return result ?? .unavailable("screen probe was cancelled")
    }

    /// For caps: which backend captures and why the others did not.
    public func backend() async -> String? {
        let sources = self.sources
        return (try? await BlockingExecutor.run("screen.backend") { (_: CancelFlag) throws(NodeError) -> String? in
            sources.backendReport(tryKWin: false)?.text
        }) ?? nil
    }

    /// For doctor: which backend captures and why others did not; on Wayland, what the compositor
    /// offers of the protocols the node uses.
    public func diagnose() async -> [Diagnosis] {
        let sources = self.sources
        let backend = (try? await BlockingExecutor.run("screen.doctor") { (_: CancelFlag) throws(NodeError) -> Diagnosis? in
            sources.backendReport()
        }) ?? nil
        let libraries = (backend.map { [$0] } ?? []) + MediaLibraryCheck.diagnose()
        // The Wayland protocol list matters where wlroots' protocols would be used, not on GNOME.
        let onGnome = backend?.text.contains("GNOME's Mutter") ?? false
        guard let socket = sources.settings.waylandDisplay, !onGnome, sources.settings.backend != .x11, sources.settings.backend != .fbdev,
              sources.settings.backend != .gnome else { return libraries }
        return libraries + ((try? await BlockingExecutor.run("screen.doctor") { (_: CancelFlag) throws(NodeError) -> [Diagnosis] in
            WaylandProtocolReport.diagnose(socket: socket)
        }) ?? [])
    }

    func snapshot(_ p: ScreenSnapshotParams, _ context: InvocationContext) async throws(NodeError) -> ScreenSnapshotResult {
        let log = self.log, budget = context.payloadBudget
        return try await withGrabber("screen.snapshot", screenIndex: p.screenIndex) { grabber, cancel throws(NodeError) in
            try SnapshotService.run(p, grabber: grabber, budget: budget, cancel: cancel, log: log)
        }
    }

    func record(_ p: ScreenRecordParams, _ context: InvocationContext) async throws(NodeError) -> ScreenRecordResult {
        let log = self.log, budget = context.payloadBudget, audioDevice = sources.settings.audioDevice
        // A recording that cannot finish before the caller gives up is refused up front.
        try context.invokeDeadline.requireRoom(forDurationMs: p.durationMs)
        return try await withGrabber("screen.record", screenIndex: p.screenIndex) { grabber, cancel throws(NodeError) in
            try RecordService.run(p, grabber: grabber, budget: budget, audioDevice: audioDevice,
                                  cancel: cancel, log: log)
        }
    }

    public func shutdown() async { cache.clear() }

    /// Runs `body` on its own thread with a grabber for `screenIndex` (the cached one when it still
    /// fits). The grabber goes back to the cache only when the command succeeded.
    private func withGrabber<R: Sendable>(_ name: String, screenIndex: Int,
                                          _ body: @escaping @Sendable (any ScreenGrabber, CancelFlag) throws(NodeError) -> R)
        async throws(NodeError) -> R {
        let sources = self.sources, cache = self.cache
        return try await BlockingExecutor.run(name) { (cancel: CancelFlag) throws(NodeError) -> R in
            let grabber = try cache.checkout(screenIndex: screenIndex) { () throws(NodeError) -> any ScreenGrabber in
                try sources.open(screenIndex: screenIndex)
            }
            let payload = try body(grabber, cancel)
            cache.checkin(grabber, screenIndex: screenIndex)
            return payload
        }
    }
}

extension CancelFlag {
    /// CANCELLED once the caller stopped waiting (the flag of BlockingExecutor).
    func check() throws(NodeError) { try check(ScreenError.cancelled()) }
}
