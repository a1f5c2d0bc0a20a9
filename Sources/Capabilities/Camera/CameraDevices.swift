import Config
import Glibc
import Kit
import Support

/// A capture device as camera.list reports it.
public struct CameraInfo: Encodable, Sendable, Equatable {
    let id: String
    let name: String
    let position: String
    var deviceType = "v4l2"

    init(id: String, name: String, position: String) { self.id = id; self.name = name; self.position = position }
}

/// Finds V4L2 capture devices: every videoN node in the device directory that answers
/// VIDIOC_QUERYCAP as a streaming capture device (UVC metadata nodes are skipped).
enum CameraDevices {
    static func nodes(in dir: String) -> [String] {
        let names = (try? FileSystem.contentsOfDirectory(dir)) ?? []
        return names.compactMap { name -> (Int, String)? in
            guard name.hasPrefix("video"), let n = Int(name.dropFirst(5)) else { return nil }
            return (n, dir + "/" + name)
        }.sorted { $0.0 < $1.0 }.map(\.1)
    }

    /// `nodes` without a Raspberry Pi camera pipeline's (receiver, ISP, codec): raw Bayer and
    /// processing stages that capture nothing a person would call a picture.
    static func cameraNodes(in dir: String, sysfs: String) -> [String] {
        nodes(in: dir).filter { !CSIDetection.isPipelineNode($0, sysfs: sysfs) }
    }

    /// Capture devices, plus the first error seen opening one (permission, busy) so an empty list
    /// can say why.
    static func list(in dir: String, sysfs: String = "/sys") -> (devices: [CameraInfo], firstError: NodeError?) {
        var devices: [CameraInfo] = [], firstError: NodeError? = nil
        for path in cameraNodes(in: dir, sysfs: sysfs) {
            do throws(NodeError) {
                let device = try V4L2Device(path: path)
                let id = try device.identity()
                guard id.isCapture else { continue }
                devices.append(CameraInfo(id: path, name: id.name, position: position(of: path, sysfs: sysfs)))
            } catch {
                if firstError == nil { firstError = error }
            }
        }
        return (devices, firstError)
    }

    /// "front"/"back" when the firmware says which panel the camera sits on (ACPI _PLD, exposed
    /// by the kernel as `physical_location/panel` on the device or one of its parents — laptops
    /// and tablets have it); otherwise "external" for USB cameras and "unknown" for the rest.
    static func position(of path: String, sysfs: String = "/sys") -> String {
        let node = PathName.lastComponent(path)
        let link = sysfs + "/class/video4linux/\(node)/device"
        guard let real = realpath(link, nil) else { return "unknown" }
        defer { free(real) }
        var dir = String(cString: real)
        while dir.count > sysfs.count {
            if let panel = FileSystem.readText(dir + "/physical_location/panel") {
                switch panel.trimmed() {
                case "front": return "front"
                case "back": return "back"
                default: break
                }
            }
            dir = PathName.directory(dir)
        }
        return String(cString: real).contains("/usb") ? "external" : "unknown"
    }

    /// The device a command means: `deviceId` (a path or videoN); else, for `facing`, the camera on
    /// that side when the firmware reports sides; else the configured default, else the first
    /// capture device. A facing no camera has is an error only when sides are known: a lone USB
    /// webcam answers for both, as the only camera there is.
    static func resolve(_ deviceId: String?, facing: String? = nil, settings: CameraSettings) throws(NodeError) -> String {
        if let id = deviceId {
            let path = id.hasPrefix("/") ? id : settings.deviceDir + "/" + id
            // Only device nodes we enumerate (or the configured one): never open arbitrary paths.
            guard cameraNodes(in: settings.deviceDir, sysfs: settings.sysfsRoot).contains(path) || path == settings.defaultDevice else {
                throw NodeError.invalidRequest("deviceId \"\(id)\" is not a camera on this node (see camera.list)")
            }
            return path
        }
        if let facing {
            let found = list(in: settings.deviceDir, sysfs: settings.sysfsRoot)
            if let match = found.devices.first(where: { $0.position == facing }) { return match.id }
            let sided = found.devices.filter { $0.position == "front" || $0.position == "back" }
            if !sided.isEmpty {
                let have = sided.map { "\($0.id) (\($0.position))" }.joined(separator: ", ")
                throw CameraError.unavailable("no \(facing)-facing camera on this node; cameras with a known side: \(have)")
            }
        }
        if let d = settings.defaultDevice { return d }
        let found = list(in: settings.deviceDir, sysfs: settings.sysfsRoot)
        guard let first = found.devices.first else {
            throw found.firstError ?? CameraError.unavailable("no V4L2 capture device in \(settings.deviceDir)")
        }
        return first.id
    }
}
