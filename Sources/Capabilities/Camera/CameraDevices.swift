import Foundation
import NodeHost

/// A capture device as camera.list reports it.
struct CameraInfo: Sendable, Equatable {
    let id: String
    let name: String
    let position: String

    var json: JSONValue {
        ["id": .string(id), "name": .string(name), "position": .string(position), "deviceType": "v4l2"]
    }
}

/// Finds V4L2 capture devices: every videoN node in the device directory that answers
/// VIDIOC_QUERYCAP as a streaming capture device (UVC metadata nodes are skipped).
enum CameraDevices {
    static func nodes(in dir: String) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
        return names.compactMap { name -> (Int, String)? in
            guard name.hasPrefix("video"), let n = Int(name.dropFirst(5)) else { return nil }
            return (n, dir + "/" + name)
        }.sorted { $0.0 < $1.0 }.map(\.1)
    }

    /// Capture devices, plus the first error seen opening one (permission, busy) so an empty list
    /// can say why.
    static func list(in dir: String) -> (devices: [CameraInfo], firstError: NodeError?) {
        var devices: [CameraInfo] = [], firstError: NodeError? = nil
        for path in nodes(in: dir) {
            do throws(NodeError) {
                let device = try V4L2Device(path: path)
                let id = try device.identity()
                guard id.isCapture else { continue }
                devices.append(CameraInfo(id: path, name: id.name, position: position(of: path)))
            } catch {
                if firstError == nil { firstError = error }
            }
        }
        return (devices, firstError)
    }

    /// USB cameras are external; built-in ones are not distinguishable from sysfs reliably.
    static func position(of path: String) -> String {
        let node = (path as NSString).lastPathComponent
        let link = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/sys/class/video4linux/\(node)/device")) ?? ""
        return link.contains("usb") ? "external" : "unknown"
    }

    /// The device a command means: `deviceId` (a path or videoN), else the configured default,
    /// else the first capture device.
    static func resolve(_ deviceId: String?, settings: CameraSettings) throws(NodeError) -> String {
        if let id = deviceId {
            let path = id.hasPrefix("/") ? id : settings.deviceDir + "/" + id
            // Only device nodes we enumerate (or the configured one): never open arbitrary paths.
            guard nodes(in: settings.deviceDir).contains(path) || path == settings.defaultDevice else {
                throw NodeError.invalidRequest("deviceId \"\(id)\" is not a camera on this node (see camera.list)")
            }
            return path
        }
        if let d = settings.defaultDevice { return d }
        let found = list(in: settings.deviceDir)
        guard let first = found.devices.first else {
            throw found.firstError ?? CameraError.unavailable("no V4L2 capture device in \(settings.deviceDir)")
        }
        return first.id
    }
}
