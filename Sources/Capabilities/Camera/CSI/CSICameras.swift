import Kit
import Support

/// The Raspberry Pi CSI cameras this node can serve now, and why not when it cannot
/// (`capabilities.camera.backend`, what is installed, what sysfs shows).
struct CSICameras: Sendable {
    let detection: CSIDetection
    let tools: RpicamTools?
    let cameras: [RpicamCamera]
    /// Why CSI cameras that are (or may be) there cannot be used: for camera.list's emptiness,
    /// availability and doctor.
    let problem: String?
    /// The error rpicam's listing ended with (CAMERA_BUSY when another process has the camera).
    var failure: NodeError?

    static let none = CSICameras(detection: CSIDetection(receivers: [], sensors: [], board: nil), tools: nil, cameras: [], problem: nil)

    static func discover(_ settings: CameraSettings, cancel: CancelFlag) -> CSICameras {
        if settings.backend == .v4l2 { return .none }
        let detection = CSIDetection.scan(sysfs: settings.sysfsRoot)
        if settings.backend == .libcamera {
            return CSICameras(detection: detection, tools: nil, cameras: [],
                              problem: "capabilities.camera.backend \"libcamera\": this release has no libcamera backend yet; use \"rpicam\" (Raspberry Pi OS: sudo apt install rpicam-apps-lite) or \"auto\"")
        }
        // A machine without a Pi camera receiver: nothing to run (unless rpicam is asked for).
        if settings.backend == .auto, !detection.hasReceiver { return .none }
        guard let tools = RpicamTools.find(path: settings.toolPath) else {
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

    /// What to install, by board and release.
    private static func missingTools(_ d: CSIDetection) -> String {
        let sensors = d.sensors.isEmpty ? "a Raspberry Pi camera port" : "a CSI camera (\(d.sensors.map(CSIDetection.moduleName).joined(separator: ", ")))"
        if FileSystem.exists("/etc/rpi-issue") {
            return "\(sensors) is here but rpicam-apps are not installed: sudo apt install rpicam-apps-lite"
        }
        if d.isPi5 {
            return "\(sensors) is here, but Debian's libcamera has no Raspberry Pi 5 support and Debian has no rpicam-apps: use Raspberry Pi OS for the camera"
        }
        return "\(sensors) is here but nothing here can drive it: on Raspberry Pi OS, sudo apt install rpicam-apps-lite; Debian has no rpicam-apps (see README, Raspberry Pi cameras)"
    }

    /// camera.list's entries.
    var infos: [CameraInfo] {
        cameras.map { c in
            var info = CameraInfo(id: c.deviceId, name: CSIDetection.moduleName(sensor: c.sensor), position: "unknown")
            info.deviceType = "rpicam"
            return info
        }
    }

    func camera(_ id: String) -> RpicamCamera? { cameras.first { $0.deviceId == id } }

    /// Whether `id` names a CSI camera ("csi0"), served or not.
    static func isCSIId(_ id: String) -> Bool { id.hasPrefix("csi") && Int(id.dropFirst(3)) != nil }
}
