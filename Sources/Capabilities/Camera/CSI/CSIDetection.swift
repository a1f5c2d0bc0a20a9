import Support

/// Raspberry Pi CSI cameras as sysfs shows them, without libcamera: a media device whose model is
/// `unicam` (Pi 0–4, one per CSI port) or `rp1-cfe` (Pi 5), and the image sensors on I²C
/// (`/sys/class/video4linux/v4l-subdev*/name`, "imx708 10-001a"). libcamera matches the same
/// media devices. The V4L2 nodes of those drivers, of the ISPs behind them and of the Pi 4's codec
/// are not cameras (raw Bayer, ISP stages, an encoder): the V4L2 backend skips them.
struct CSIDetection: Sendable, Equatable {
    /// Receivers: "unicam" or "rp1-cfe", one per media device.
    let receivers: [String]
    /// Sensor names with their I²C address, in sysfs order ("imx708 10-001a").
    let sensors: [String]
    /// The board's model line ("Raspberry Pi 5 Model B Rev 1.0"), when the device tree says.
    let board: String?

    static let receiverModels: Set<String> = ["unicam", "rp1-cfe"]
    /// The drivers whose video nodes are pipeline stages, not cameras.
    static let pipelineDrivers = ["unicam", "rp1-cfe", "bcm2835-isp", "pispbe", "bcm2835-codec"]
    /// Image sensors are named after their part; lens drivers (dw9807 …) and bridges are not.
    private static let sensorPrefixes = ["imx", "ov", "ar0", "gc", "s5k", "hm", "mt9", "ox", "vd", "os", "ar1"]

    static func scan(sysfs: String) -> CSIDetection {
        let media = sysfs + "/bus/media/devices"
        var receivers: [String] = []
        for dev in ((try? FileSystem.contentsOfDirectory(media)) ?? []).sorted() where dev.hasPrefix("media") {
            if let model = FileSystem.readText(media + "/" + dev + "/model")?.trimmed(), receiverModels.contains(model) {
                receivers.append(model)
            }
        }
        var sensors: [String] = []
        let v4l = sysfs + "/class/video4linux"
        let subdevs = ((try? FileSystem.contentsOfDirectory(v4l)) ?? []).filter { $0.hasPrefix("v4l-subdev") }
            .sorted { (Int($0.dropFirst(10)) ?? 0) < (Int($1.dropFirst(10)) ?? 0) }
        for sub in subdevs {
            guard let name = FileSystem.readText(v4l + "/" + sub + "/name")?.trimmed() else { continue }
            let parts = name.split(separator: " ")
            // "<part> <bus>-<4 hex digits>": an I²C device.
            guard parts.count == 2, parts[1].split(separator: "-").last?.count == 4,
                  sensorPrefixes.contains(where: { parts[0].lowercased().hasPrefix($0) }) else { continue }
            sensors.append(name)
        }
        // The device tree's strings end in NUL.
        let board = FileSystem.readText(sysfs + "/firmware/devicetree/base/model")?.split(separator: "\0").first.map { String($0).trimmed() }
        return CSIDetection(receivers: receivers, sensors: receivers.isEmpty ? [] : sensors, board: board?.isEmpty == false ? board : nil)
    }

    /// Whether a Raspberry Pi CSI receiver is here at all.
    var hasReceiver: Bool { !receivers.isEmpty }

    /// A Pi 5 (RP1's receiver): no hardware H.264 encoder, and no support in Debian 13's libcamera.
    var isPi5: Bool { receivers.contains("rp1-cfe") || (board?.contains("Raspberry Pi 5") ?? false) }

    /// Whether `/dev/videoN` belongs to a Pi camera pipeline (its sysfs name says which driver).
    static func isPipelineNode(_ node: String, sysfs: String) -> Bool {
        guard let name = FileSystem.readText(sysfs + "/class/video4linux/" + PathName.lastComponent(node) + "/name")?.trimmed() else {
            return false
        }
        return pipelineDrivers.contains { name.hasPrefix($0) }
    }

    /// The sensor's part ("imx708") and the module it is sold in, where known.
    static func moduleName(sensor: String) -> String {
        let part = sensor.split(separator: " ").first.map(String.init) ?? sensor
        let modules = ["ov5647": "Camera Module 1", "imx219": "Camera Module 2", "imx708": "Camera Module 3",
                       "imx477": "HQ Camera", "imx296": "Global Shutter Camera", "imx500": "AI Camera", "imx519": "Arducam 16MP"]
        return modules[part.lowercased()].map { "\($0) (\(part))" } ?? part
    }

    /// Sensors whose modules focus (rpicam's autofocus options apply).
    static func hasAutofocus(sensor: String) -> Bool {
        ["imx708", "imx519"].contains(sensor.split(separator: " ").first.map { $0.lowercased() } ?? "")
    }
}
