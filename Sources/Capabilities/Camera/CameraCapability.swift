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
    /// CSI cameras found lately (rpicam-hello or libcamera's manager is not asked on every command).
    let csi = CSIDiscovery()
    private let log = Logger(component: "camera")

    public init(context: CapabilityContext) {
        var settings = CameraSettings(context.section, environment: context.environment)
        settings.libraryDirectory = context.manifest.library.flatMap(BundleCatalog.directory(holding:))
        self.init(manifest: context.manifest, settings: settings)
        // FFmpeg's libraries (scaling, video) are Media's, shared by every bundle: one node-wide period.
        IdleLibraryRelease.after = context.releaseIdleLibrariesAfter
    }

    init(manifest: BundleManifest, settings: CameraSettings) {
        self.manifest = manifest
        self.settings = settings
        warm = WarmCamera(idleRelease: settings.idleRelease)
    }

    public func availability() async -> Availability {
        let settings = self.settings, discovery = self.csi
        let result = try? await BlockingExecutor.run("camera.probe") { (_: CancelFlag) throws(NodeError) -> Availability in
            if let d = settings.defaultDevice, !CSICameras.isCSIId(d) { return FileSystem.exists(d) ? .available : .unavailable("\(d) does not exist") }
            let found = CameraDevices.list(in: settings.deviceDir, sysfs: settings.sysfsRoot)
            if !found.devices.isEmpty { return .available }
            let csi = discovery.current(settings, cancel: CancelFlag())
            if !csi.isEmpty { return .available }
            return .unavailable(csi.problem ?? found.firstError?.message ?? "no V4L2 capture device in \(settings.deviceDir)")
        }
        return result ?? .unavailable("camera probe was cancelled")
    }

    /// Whether this user may open the capture devices (the video group).
    public func diagnose() async -> [Diagnosis] {
        let settings = self.settings
        let csi = await BlockingExecutor.run("camera.csi") { (flag: CancelFlag) -> [Diagnosis] in Self.csiDiagnosis(settings, flag) }
        return devicesDiagnosis() + csi + MediaLibraryCheck.diagnose()
    }

    /// A Raspberry Pi's own cameras: what serves them, or what is missing.
    private static func csiDiagnosis(_ settings: CameraSettings, _ flag: CancelFlag) -> [Diagnosis] {
        let csi = CSICameras.discover(settings, cancel: flag)
        if let problem = csi.problem { return [Diagnosis(.warn, problem)] }
        if let lib = csi.libcamera, !csi.libcameraCameras.isEmpty {
            return [Diagnosis(.ok, "cameras through libcamera \(lib.version): " +
                              csi.libcameraCameras.map { "\($0.deviceId) (\($0.model))" }.joined(separator: ", "))]
        }
        guard !csi.cameras.isEmpty, let tools = csi.tools else { return [] }
        let names = csi.cameras.map { "\($0.deviceId): \(CSIDetection.moduleName(sensor: $0.sensor)) \($0.width)x\($0.height)" }
        var out = [Diagnosis(.ok, "CSI cameras through \(PathName.lastComponent(tools.still)): \(names.joined(separator: ", "))")]
        if csi.detection.isPi5 {
            out.append(Diagnosis(.ok, "Raspberry Pi 5: no hardware H.264 encoder; camera.clip encodes 720p with libx264 (about one core)"))
        }
        return out
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

    /// The Pi's own CSI cameras first (on a Pi they are the camera), then V4L2 devices.
    func list() async throws(NodeError) -> CameraListResult {
        let settings = self.settings, discovery = self.csi
        return try await BlockingExecutor.run("camera.list") { (flag: CancelFlag) throws(NodeError) -> CameraListResult in
            CameraListResult(devices: discovery.current(settings, cancel: flag).infos
                             + CameraDevices.list(in: settings.deviceDir, sysfs: settings.sysfsRoot).devices)
        }
    }

    func snap(_ p: CameraSnapParams, _ context: InvocationContext) async throws(NodeError) -> CameraSnapResult {
        let log = self.log, budget = context.payloadBudget, deadline = context.invokeDeadline
        if let other = try await servedElsewhere(p.deviceId, facing: p.facing?.rawValue) {
            return try await BlockingExecutor.run("camera.snap") { (cancel: CancelFlag) throws(NodeError) -> CameraSnapResult in
                switch other {
                case .rpicam(let c): return try c.snap(p, budget: budget, deadline: deadline, cancel: cancel)
                case .libcamera(let c): return try c.snap(p, budget: budget, cancel: cancel)
                }
            }
        }
        return try await withSession("camera.snap", p.deviceId, facing: p.facing?.rawValue) { session, cancel throws(NodeError) in
            try SnapService.run(p, session: session, budget: budget, cancel: cancel, log: log)
        }
    }

    func clip(_ p: CameraClipParams, _ context: InvocationContext) async throws(NodeError) -> CameraClipResult {
        let settings = self.settings, log = self.log, budget = context.payloadBudget
        // A clip that cannot finish before the caller gives up is refused up front.
        try context.invokeDeadline.requireRoom(forDurationMs: p.durationMs)
        if let other = try await servedElsewhere(p.deviceId, facing: p.facing?.rawValue) {
            let deadline = context.invokeDeadline
            return try await BlockingExecutor.run("camera.clip") { (cancel: CancelFlag) throws(NodeError) -> CameraClipResult in
                switch other {
                case .rpicam(let c): return try c.clip(p, budget: budget, deadline: deadline, cancel: cancel)
                case .libcamera(let c): return try c.clip(p, budget: budget, cancel: cancel)
                }
            }
        }
        return try await withSession("camera.clip", p.deviceId, facing: p.facing?.rawValue) { session, cancel throws(NodeError) in
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

    /// A camera served outside V4L2.
    enum ServedElsewhere {
        case rpicam(RpicamCapture)
        case libcamera(LibcameraCapture)
    }

    /// The camera a command means when V4L2 does not serve it, nil for a V4L2 one: `deviceId`
    /// "csiN" or "libcamera:…"; or, when it names nothing (and no default is configured), the
    /// first such camera when the node has one and no V4L2 camera answers for the facing asked.
    private func servedElsewhere(_ deviceId: String?, facing: String?) async throws(NodeError) -> ServedElsewhere? {
        let settings = self.settings, log = self.log, discovery = self.csi
        let wanted = deviceId ?? settings.defaultDevice
        if let id = wanted, !CSICameras.isCSIId(id) { return nil }
        return try await BlockingExecutor.run("camera.csi") { (flag: CancelFlag) throws(NodeError) -> ServedElsewhere? in
            let csi = discovery.current(settings, cancel: flag)
            func served(_ id: String) -> ServedElsewhere? {
                if let camera = csi.camera(id), let tools = csi.tools {
                    return .rpicam(RpicamCapture(tools: tools, camera: camera, detection: csi.detection, settings: settings, log: log))
                }
                if let lease = csi.libcameraLease, let camera = csi.libcameraCameras.first(where: { $0.deviceId == id }) {
                    return .libcamera(LibcameraCapture(lease: lease, camera: camera, settings: settings, log: log))
                }
                return nil
            }
            if let id = wanted {
                if let s = served(id) { return s }
                if let failure = csi.failure { throw failure }
                throw csi.problem.map { CameraError.unavailable($0) }
                    ?? NodeError.invalidRequest("deviceId \"\(id)\" is not a camera on this node (see camera.list)")
            }
            guard let first = csi.infos.first, let target = served(first.id) else { return nil }
            // A sided V4L2 camera (a laptop's) answers for its facing; otherwise this one.
            if let facing, first.position != facing,
               CameraDevices.list(in: settings.deviceDir, sysfs: settings.sysfsRoot).devices.contains(where: { $0.position == facing }) {
                return nil
            }
            return target
        }
    }
}

extension CancelFlag {
    /// CANCELLED once the caller stopped waiting (the flag of BlockingExecutor).
    func check() throws(NodeError) { try check(CameraError.cancelled()) }
}
