import Support

/// One camera as `rpicam-hello --list-cameras` prints it:
/// `0 : imx708 [4608x2592 10-bit RGGB] (/base/soc/i2c0mux/i2c@1/imx708@1a)` — the index rpicam's
/// `--camera` takes, the sensor, its full resolution and libcamera's id (the device-tree path).
/// The text is not a stable format (no JSON form exists): lines that do not match are skipped,
/// the mode lines below each camera included.
struct RpicamCamera: Sendable, Equatable {
    let index: Int
    let sensor: String
    let width: Int
    let height: Int
    let libcameraId: String

    /// camera.list's id for it ("csi0"): short, stable while the cable stays in its port.
    var deviceId: String { "csi\(index)" }

    static func parse(_ text: String) -> [RpicamCamera] {
        var out: [RpicamCamera] = []
        for raw in text.split(separator: "\n") {
            let line = raw.trimmed()
            guard let colon = line.firstIndex(of: ":"), let index = Int(line[..<colon].trimmed()),
                  let open = line.firstIndex(of: "["), let close = line.firstIndex(of: "]"), open < close else { continue }
            let sensor = line[line.index(after: colon)..<open].trimmed()
            let size = line[line.index(after: open)..<close].split(separator: " ").first?.split(separator: "x") ?? []
            guard size.count == 2, let w = Int(size[0]), let h = Int(size[1]), w > 0, h > 0, !sensor.isEmpty else { continue }
            var id = ""
            if let p = line[close...].firstIndex(of: "("), let q = line.lastIndex(of: ")"), p < q { id = String(line[line.index(after: p)..<q]) }
            out.append(RpicamCamera(index: index, sensor: sensor, width: w, height: h, libcameraId: id))
        }
        return out
    }

    /// `maxWidth` (or less) wide at the sensor's aspect, both even (the encoders' need).
    func size(maxWidth: Int) -> (width: Int, height: Int) {
        let w = max(16, min(maxWidth, width)) & ~1
        return (w, max(16, Int((Double(w) * Double(height) / Double(width)).rounded())) & ~1)
    }
}
