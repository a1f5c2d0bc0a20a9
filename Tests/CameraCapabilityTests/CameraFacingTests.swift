@testable import Config
import Foundation
@testable import HostPresence
@testable import Kit
@testable import NodeCLI
@testable import Registry
@testable import Store
@testable import Support
@testable import TestSupport
import Testing

/// `facing` and camera.list positions from sysfs `physical_location/panel` (ACPI _PLD), with a
/// sysfs tree of our own (OPENCLAW_NODE_SYSFS) in front of two fake devices: video0 (front,
/// 640x480) and video2 (back, 320x240) — the returned size tells which one answered.
@Suite(.serialized) struct CameraFacingTests {
    /// Links /sys/class/video4linux/<node>/device to a USB interface whose parent USB device has
    /// the panel (that is where the kernel puts it for a laptop's built-in webcam).
    static func sysfs(_ root: String, _ cameras: [(node: String, usbPort: String, panel: String?)]) throws {
        let fm = FileManager.default
        for c in cameras {
            let usbDevice = "\(root)/devices/pci0000:00/0000:00:14.0/usb1/\(c.usbPort)"
            let interface = usbDevice + "/\(c.usbPort):1.0"
            try fm.createDirectory(atPath: interface, withIntermediateDirectories: true)
            if let panel = c.panel {
                try fm.createDirectory(atPath: usbDevice + "/physical_location", withIntermediateDirectories: true)
                try (panel + "\n").write(toFile: usbDevice + "/physical_location/panel", atomically: true, encoding: .utf8)
            }
            let classDir = "\(root)/class/video4linux/\(c.node)"
            try fm.createDirectory(atPath: classDir, withIntermediateDirectories: true)
            try fm.createSymbolicLink(atPath: classDir + "/device", withDestinationPath: interface)
        }
    }

    static func twoCameras(frontPanel: String? = "front", backPanel: String? = "back") throws -> FakeCamera {
        var cam = try FakeCamera()
        let dir = cam.dir
        cam.env["OCN_FAKE_V4L2"] = "\(dir)/dev/video0:YUYV:640x480;\(dir)/dev/video2:YUYV:320x240"
        cam.env["OPENCLAW_NODE_SYSFS"] = dir + "/sys"
        _ = FileManager.default.createFile(atPath: dir + "/dev/video2", contents: Data())
        try sysfs(dir + "/sys", [("video0", "1-5", frontPanel), ("video2", "1-6", backPanel)])
        return cam
    }

    @Test func listReportsTheSidesAndFacingPicksTheCamera() throws {
        let cam = try Self.twoCameras(); defer { cam.cleanup() }
        let (r, list) = try cam.invoke("camera.list")
        #expect(r.code == 0, "\(r.stderr)")
        let positions = (list?["devices"]?.arrayValue ?? []).map { $0["position"]?.stringValue ?? "" }
        #expect(positions == ["front", "back"], "\(r.stdout)")
        let (_, back) = try cam.invoke("camera.snap", #"{"facing":"back"}"#)
        #expect(back?["width"] == 320, "\(String(describing: back))")
        let (_, front) = try cam.invoke("camera.snap", #"{"facing":"front"}"#)
        #expect(front?["width"] == 640)
        let (_, clip) = try cam.invoke("camera.clip", #"{"facing":"back","durationMs":300,"includeAudio":false}"#)
        #expect(clip?["format"] == "mp4", "\(String(describing: clip))")
    }

    @Test func aMissingSideIsAnErrorOnlyWhenSidesAreKnown() throws {
        let known = try Self.twoCameras(frontPanel: "front", backPanel: nil); defer { known.cleanup() }
        let (r, err) = try known.invoke("camera.snap", #"{"facing":"back"}"#)
        #expect(r.code == 1)
        #expect(err?["code"] == "CAMERA_UNAVAILABLE")
        #expect(err?["message"]?.stringValue?.contains("no back-facing camera") == true, "\(r.stdout)")

        // USB webcams without firmware sides: "external", and any facing gets the first camera.
        let usb = try Self.twoCameras(frontPanel: nil, backPanel: nil); defer { usb.cleanup() }
        let (_, list) = try usb.invoke("camera.list")
        #expect((list?["devices"]?.arrayValue ?? []).allSatisfy { $0["position"] == "external" })
        let (r2, snap) = try usb.invoke("camera.snap", #"{"facing":"back"}"#)
        #expect(r2.code == 0, "\(r2.stdout)")
        #expect(snap?["width"] == 640)
    }
}
