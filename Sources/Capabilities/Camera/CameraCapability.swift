import Config
import Glibc
import Kit
import Media
import Support

/// camera.list, camera.snap and camera.clip (with the ALSA microphone as AAC) on V4L2 devices through raw ioctls and mmap streaming (no
/// subprocess, no libv4l2). Work runs on a dedicated thread per invoke; the last camera is kept
/// streaming for a short idle period (WarmCamera) and then released for other applications.
public struct CameraCapability: Capability, CapabilityLifecycle, SelfDiagnosing {
    public let manifest: BundleManifest
    public var handlers: [CommandHandler] { CameraCommands.handlers(self) }
    let settings: CameraSettings
    let warm: WarmCamera
    private let log = Logger(component: "camera")

    public init(context: CapabilityContext) {
        self.init(manifest: context.manifest, settings: CameraSettings(context.section, environment: context.environment))
        // FFmpeg's libraries (scaling, video) are Media's, shared by every bundle: one node-wide period.
        IdleLibraryRelease.after = context.releaseIdleLibrariesAfter
    }

    init(manifest: BundleManifest, settings: CameraSettings) {
        self.manifest = manifest
        self.settings = settings
        warm = WarmCamera(idleRelease: settings.idleRelease)
    }

    public func availability() async -> Availability {
        let settings = self.settings
        let result = try? await BlockingExecutor.run("camera.probe") { (_: CancelFlag) throws(NodeError) -> Availability in
            if let d = settings.defaultDevice { return FileSystem.exists(d) ? .available : .unavailable("\(d) does not exist") }
            let found = CameraDevices.list(in: settings.deviceDir)
            if !found.devices.isEmpty { return .available }
            return .unavailable(found.firstError?.message ?? "no V4L2 capture device in \(settings.deviceDir)")
        }
        return result ?? .unavailable("camera probe was cancelled")
    }

    /// Whether this user may open the capture devices (the video group).
    public func diagnose() async -> [Diagnosis] {
        devicesDiagnosis() + MediaLibraryCheck.diagnose()
    }

    private func devicesDiagnosis() -> [Diagnosis] {
        let dir = settings.deviceDir
        let devices = ((try? FileSystem.contentsOfDirectory(dir)) ?? []).filter { $0.hasPrefix("video") }.sorted()
        if devices.isEmpty { return [Diagnosis(.warn, "no \(dir)/video* device")] }
        if let denied = devices.first(where: { access("\(dir)/\($0)", R_OK | W_OK) != 0 }) {
            return [Diagnosis(.fail, "no access to \(dir)/\(denied): add this user to the video group (sudo usermod -aG video $USER) and log in again")]
        }
        return [Diagnosis(.ok, "devices: \(devices.map { "\(dir)/\($0)" }.joined(separator: ", "))")]
    }

    func list() async throws(NodeError) -> CameraListResult {
        let settings = self.settings
        return try await BlockingExecutor.run("camera.list") { (_: CancelFlag) throws(NodeError) -> CameraListResult in
            CameraListResult(devices: CameraDevices.list(in: settings.deviceDir, sysfs: settings.sysfsRoot).devices)
        }
    }

    func snap(_ p: CameraSnapParams, _ context: InvocationContext) async throws(NodeError) -> CameraSnapResult {
        let log = self.log, budget = context.payloadBudget
        return try await withSession("camera.snap", p.deviceId, facing: p.facing) { session, cancel throws(NodeError) in
            try SnapService.run(p, session: session, budget: budget, cancel: cancel, log: log)
        }
    }

    func clip(_ p: CameraClipParams, _ context: InvocationContext) async throws(NodeError) -> CameraClipResult {
        let settings = self.settings, log = self.log, budget = context.payloadBudget
        // A clip that cannot finish before the caller gives up is refused up front.
        try context.invokeDeadline.requireRoom(forDurationMs: p.effectiveDurationMs)
        return try await withSession("camera.clip", p.deviceId, facing: p.facing) { session, cancel throws(NodeError) in
            try ClipService.run(p, session: session, budget: budget, audioDevice: settings.audioDevice,
                                cancel: cancel, log: log)
        }
    }

    public func shutdown() async { warm.clear() }

    /// Runs `body` on its own thread with a session on the wanted camera (the warm one when it is
    /// the same device). The session goes back to the warm cache only when the command succeeded;
    /// on failure it is released at once, so a broken or busy device is not held.
    private func withSession<R: Sendable>(_ name: String, _ deviceId: String?, facing: String?,
                                          _ body: @escaping @Sendable (CameraSession, CancelFlag) throws(NodeError) -> R)
        async throws(NodeError) -> R {
        let settings = self.settings, warm = self.warm
        return try await BlockingExecutor.run(name) { (cancel: CancelFlag) throws(NodeError) -> R in
            let path = try CameraDevices.resolve(deviceId, facing: facing, settings: settings)
            let session: CameraSession
            if let idle = warm.checkout(path: path) { session = idle } else { session = try CameraSession(path: path, warmup: settings.warmup) }
            let payload = try body(session, cancel)
            warm.checkin(session, path: path)
            return payload
        }
    }
}

extension CancelFlag {
    /// CANCELLED once the caller stopped waiting (the flag of BlockingExecutor).
    func check() throws(NodeError) { try check(CameraError.cancelled()) }
}
