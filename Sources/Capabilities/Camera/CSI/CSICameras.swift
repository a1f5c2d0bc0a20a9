import Kit
import Support

/// The cameras only libcamera can drive — a Raspberry Pi's CSI modules, other ISPs' sensors — that
/// this node can serve now, and why not when it cannot (`capabilities.camera.backend`, what is
/// installed, what sysfs shows): through rpicam-apps, or libcamera in process
/// (openclaw-node-libcamera).
struct CSICameras: Sendable {
    let detection: CSIDetection
    let tools: RpicamTools?
    let cameras: [RpicamCamera]
    /// libcamera in process, kept loaded while this discovery is kept (CSIDiscovery).
    var libcameraLease: LibcameraLibrary.Holder.Lease? = nil
    var libcamera: LibcameraLibrary? { libcameraLease?.resource }
    var libcameraCameras: [LibcameraCamera] = []
    /// Why CSI cameras that are (or may be) there cannot be used: for camera.list's emptiness,
    /// availability and doctor.
    let problem: String?
    /// The error rpicam's listing ended with (CAMERA_BUSY when another process has the camera).
    var failure: NodeError?

    static let none = CSICameras(detection: CSIDetection(receivers: [], sensors: [], board: nil), tools: nil, cameras: [], problem: nil)

    static func discover(_ settings: CameraSettings, cancel: CancelFlag) -> CSICameras {
        if settings.backend == .v4l2 { return .none }
        let detection = CSIDetection.scan(sysfs: settings.sysfsRoot)
        if settings.backend == .libcamera { return inProcess(settings, detection, explicit: true) }
        // A machine without a Pi camera receiver: nothing to run (unless rpicam is asked for).
        if settings.backend == .auto, !detection.hasReceiver { return .none }
        guard let tools = RpicamTools.find(path: settings.toolPath) else {
            // No rpicam-apps (plain Debian): libcamera in process, where it is installed.
            if settings.backend == .auto {
                let found = inProcess(settings, detection, explicit: false)
                if found.libcamera != nil { return found }
            }
            return CSICameras(detection: detection, tools: nil, cameras: [], problem: missingTools(detection))
        }
        do throws(NodeError) {
            let cameras = try tools.cameras(environment: RpicamCapture.environment(settings), devices: settings.deviceDir, cancel: cancel)
            if cameras.isEmpty {
                return CSICameras(detection: detection, tools: tools, cameras: [], problem: detection.sensors.isEmpty
                    ? "a Raspberry Pi camera port is here but no camera answers: check the ribbon cable (contacts facing the right way) and camera_auto_detect=1, or dtoverlay=<sensor>, in /boot/firmware/config.txt"
                    : "sysfs shows \(detection.sensors.joined(separator: ", ")) but rpicam lists no camera; another program may hold it, or libcamera and the kernel disagree (rpicam-hello --list-cameras)")
            }
            return CSICameras(detection: detection, tools: tools, cameras: cameras, problem: nil)
        } catch {
            return CSICameras(detection: detection, tools: tools, cameras: [], problem: error.message, failure: error)
        }
    }

    /// libcamera in process: its cameras but USB ones (V4L2 serves those), or why none.
    private static func inProcess(_ settings: CameraSettings, _ detection: CSIDetection, explicit: Bool) -> CSICameras {
        let lease: LibcameraLibrary.Holder.Lease
        switch LibcameraLibrary.lease(directory: settings.libraryDirectory) {
        case .success(let l): lease = l
        case .failure(let error):
            return CSICameras(detection: detection, tools: nil, cameras: [], problem: explicit
                ? "capabilities.camera.backend \"libcamera\": the node's libcamera library is not installed (sudo apt install openclaw-node-libcamera): \(error.description)"
                : nil)
        }
        let lib = lease.resource
        var error: UnsafeMutablePointer<CChar>?
        guard let json = lib.take(lib.list(&error)) else {
            return CSICameras(detection: detection, tools: nil, cameras: [], libcameraLease: lease,
                              problem: "libcamera: \(lib.take(error) ?? "cannot list cameras")")
        }
        let cameras = LibcameraCamera.parse(json).filter { !$0.isUSB }
        return CSICameras(detection: detection, tools: nil, cameras: [], libcameraLease: lease, libcameraCameras: cameras,
                          problem: cameras.isEmpty ? "libcamera \(lib.version) lists no camera besides USB ones" : nil)
    }

    /// What to install, by board and release.
    private static func missingTools(_ d: CSIDetection) -> String {
        let sensors = d.sensors.isEmpty ? "a Raspberry Pi camera port" : "a CSI camera (\(d.sensors.map(CSIDetection.moduleName).joined(separator: ", ")))"
        if FileSystem.exists("/etc/rpi-issue") {
            return "\(sensors) is here but rpicam-apps are not installed: sudo apt install rpicam-apps-lite"
        }
        if d.isPi5 {
            return "\(sensors) is here, but Debian's libcamera has no Raspberry Pi 5 support and Debian has no rpicam-apps: use Raspberry Pi OS for the camera"
        }
        return "\(sensors) is here but nothing here can drive it: on Raspberry Pi OS, sudo apt install rpicam-apps-lite; on Debian 13, sudo apt install openclaw-node-libcamera (see README, Raspberry Pi cameras)"
    }

    /// camera.list's entries.
    var infos: [CameraInfo] {
        cameras.map { c in
            var info = CameraInfo(id: c.deviceId, name: CSIDetection.moduleName(sensor: c.sensor), position: "unknown")
            info.deviceType = "rpicam"
            return info
        } + libcameraCameras.map { c in
            var info = CameraInfo(id: c.deviceId, name: c.model, position: c.location)
            info.deviceType = "libcamera"
            return info
        }
    }

    /// Whether any camera is served here.
    var isEmpty: Bool { cameras.isEmpty && libcameraCameras.isEmpty }

    func camera(_ id: String) -> RpicamCamera? { cameras.first { $0.deviceId == id } }

    /// Whether `id` names a camera served here rather than by V4L2 ("csi0", "libcamera:…").
    static func isCSIId(_ id: String) -> Bool { (id.hasPrefix("csi") && Int(id.dropFirst(3)) != nil) || id.hasPrefix("libcamera:") }
}

/// What CSICameras.discover found, kept a few seconds for the running capability: on a Pi it runs
/// rpicam-hello (about half a second) or starts libcamera's camera manager, which a snap right
/// after a list, or a clip right after a snap, need not do again. A failed discovery (a busy
/// camera, a helper that failed) is not kept: the next command asks again.
final class CSIDiscovery: Sendable {
    static let keep: Duration = .seconds(10)
    private let last = Locked<(found: CSICameras, at: ContinuousClock.Instant)?>(nil)

    func current(_ settings: CameraSettings, cancel: CancelFlag) -> CSICameras {
        if let kept = last.withLock({ $0 }), ContinuousClock.now - kept.at < Self.keep { return kept.found }
        let found = CSICameras.discover(settings, cancel: cancel)
        guard found.failure == nil else { return found }
        let at = ContinuousClock.now
        last.withLock { $0 = (found, at) }
        // Forgotten when it expires, not only when replaced: it holds libcamera loaded.
        DeadlineTimer.shared.schedule(at: at + Self.keep) { [weak self] in
            self?.last.withLock { if $0?.at == at { $0 = nil } }
        }
        return found
    }
}
