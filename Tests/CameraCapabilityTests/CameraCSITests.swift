@testable import CameraCapability
@testable import Config
import Foundation
@testable import Kit
@testable import Support
@testable import TestSupport
import Testing

/// A Raspberry Pi's own CSI cameras: sysfs trees laid out as a Pi 4 (unicam, the ISP and codec
/// nodes) and a Pi 5 (rp1-cfe, PiSP) show them (OPENCLAW_NODE_SYSFS), and stand-in rpicam-apps on
/// PATH (Tests/fakes/rpicam) that record their arguments and answer as the real ones do, with
/// `--list-cameras` text of a Pi 4 with a Camera Module 3 and a Pi 5 with two cameras. A fake USB
/// webcam (fakev4l2) sits beside them; the fake also answers for one of the pipeline's own nodes,
/// which must not be listed.
@Suite(.serialized) struct CameraCSITests {
    static let stubs = TestPaths.repoRoot + "/Tests/fakes/rpicam"

    enum Board { case pi4, pi5, pc }

    /// The sysfs of `board`: media devices, video nodes with their driver names, I²C subdevs and
    /// the device tree's model.
    static func sysfs(_ root: String, _ board: Board) throws {
        let fm = FileManager.default
        func write(_ path: String, _ text: String) throws {
            try fm.createDirectory(atPath: (root + path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try text.write(toFile: root + path, atomically: true, encoding: .utf8)
        }
        let media: [String], videos: [(Int, String)], subdevs: [String], model: String
        switch board {
        case .pi4:
            media = ["unicam", "bcm2835-isp", "bcm2835-codec"]
            videos = [(0, "unicam-image"), (1, "unicam-embedded"), (10, "bcm2835-codec-decode"), (11, "bcm2835-codec-encode"),
                      (13, "bcm2835-isp0-output0"), (14, "bcm2835-isp0-capture1")]
            subdevs = ["imx708 10-001a", "dw9807 10-000c", "unicam-subdev"]
            model = "Raspberry Pi 4 Model B Rev 1.4\0"
        case .pi5:
            media = ["rp1-cfe", "rp1-cfe", "pispbe"]
            videos = [(0, "rp1-cfe-csi2_ch0"), (1, "rp1-cfe-csi2_ch1"), (8, "rp1-cfe-csi2_ch0"), (20, "pispbe-input")]
            subdevs = ["csi2", "pisp-fe", "imx708 4-001a", "dw9807 4-000c", "imx477 6-001a"]
            model = "Raspberry Pi 5 Model B Rev 1.0\0"
        case .pc:
            media = ["uvcvideo"]; videos = []; subdevs = []; model = ""
        }
        for (i, m) in media.enumerated() { try write("/bus/media/devices/media\(i)/model", m + "\n") }
        for (n, name) in videos { try write("/class/video4linux/video\(n)/name", name + "\n") }
        for (i, name) in subdevs.enumerated() { try write("/class/video4linux/v4l-subdev\(i)/name", name + "\n") }
        if !model.isEmpty { try write("/firmware/devicetree/base/model", model) }
    }

    struct Pi {
        var cam: FakeCamera
        var log: String { cam.dir + "/rpicam.log" }
        /// What the stand-ins were called with, one line per call ("still --nopreview …").
        var calls: [String] { ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init) }
        func cleanup() { cam.cleanup() }
    }

    /// A node on `board`: the stand-ins on PATH (unless `tools` is false), the USB webcam at
    /// dev/video30, and the fake also answering for dev/video0 — a pipeline node on a Pi.
    static func pi(_ board: Board, list: String = "list-pi4-imx708.txt", tools: Bool = true, camera: String = "") throws -> Pi {
        var cam = try FakeCamera(camera: camera)
        let dir = cam.dir
        for n in [0, 30] { _ = FileManager.default.createFile(atPath: dir + "/dev/video\(n)", contents: Data()) }
        _ = FileManager.default.createFile(atPath: dir + "/dev/media0", contents: Data())
        try? FileManager.default.removeItem(atPath: dir + "/dev/video1")
        cam.env["OCN_FAKE_V4L2"] = "\(dir)/dev/video0:YUYV:640x480;\(dir)/dev/video30:YUYV:320x240"
        cam.env["OPENCLAW_NODE_SYSFS"] = dir + "/sys"
        try sysfs(dir + "/sys", board)
        cam.env["FAKE_RPICAM_LIST"] = stubs + "/" + list
        cam.env["FAKE_RPICAM_LOG"] = dir + "/rpicam.log"
        if tools { cam.env["PATH"] = stubs + ":" + (cam.env["PATH"] ?? "/usr/bin:/bin") }
        return Pi(cam: cam)
    }

    static func ffprobe(_ mp4: [UInt8], in dir: String) throws -> JSONValue {
        let path = dir + "/clip.mp4"
        try Data(mp4).write(to: URL(fileURLWithPath: path))
        let r = try runProcess("/usr/bin/ffprobe", ["-v", "error", "-count_frames", "-show_entries", "stream=codec_type,width,height,nb_read_frames:format=duration",
                                                    "-of", "json", path])
        return try #require(JSONValue.parse(r.stdout), "\(r.stderr)")
    }

    @Test func aPi4ListsItsCameraModuleOnceBesideTheWebcamAndNoPipelineNode() throws {
        let pi = try Self.pi(.pi4); defer { pi.cleanup() }
        let (r, list) = try pi.cam.invoke("camera.list")
        #expect(r.code == 0, "\(r.stderr)")
        let devices = list?["devices"]?.arrayValue ?? []
        #expect(devices.map { $0["id"]?.stringValue ?? "" } == ["csi0", pi.cam.dir + "/dev/video30"], "\(r.stdout)")
        #expect(devices.first?["name"] == "Camera Module 3 (imx708)" && devices.first?["deviceType"] == "rpicam", "\(r.stdout)")
        #expect(devices.last?["deviceType"] == "v4l2")
        #expect(pi.calls == ["hello --list-cameras"], "\(pi.calls)")
    }

    @Test func aPi4SnapIsRpicamStillsJPEGWithAutofocusAndWarmUp() throws {
        let pi = try Self.pi(.pi4); defer { pi.cleanup() }
        let (r, snap) = try pi.cam.invoke("camera.snap")
        #expect(r.code == 0, "\(r.stdout) \(r.stderr)")
        #expect(snap?["format"] == "jpg" && snap?["width"] == 1600 && snap?["height"] == 900, "the sensor's 16:9 at 1600 wide: \(r.stdout.prefix(300))")
        let jpeg = try #require(snap?["base64"]?.stringValue.flatMap { Base64.decode($0) })
        let image = try #require(JPEGSize.of(jpeg))
        #expect(image.width == 1600 && image.height == 900)
        let still = try #require(pi.calls.last)
        #expect(still == "still --nopreview --camera 0 --width 1600 --height 900 --quality 90 --encoding jpg --timeout 1000 " +
                "--autofocus-mode auto --autofocus-on-capture --output -", "\(still)")
        // maxWidth, quality, delayMs.
        let (_, small) = try pi.cam.invoke("camera.snap", #"{"deviceId":"csi0","maxWidth":640,"quality":0.5,"delayMs":1500}"#)
        #expect(small?["width"] == 640 && small?["height"] == 360, "\(String(describing: small))")
        #expect(pi.calls.last?.contains("--quality 50 --encoding jpg --timeout 1500") == true, "\(pi.calls)")
        // The USB webcam is still served by V4L2.
        let (_, usb) = try pi.cam.invoke("camera.snap", #"{"deviceId":"video30"}"#)
        #expect(usb?["width"] == 320, "\(String(describing: usb))")
        let (bad, err) = try pi.cam.invoke("camera.snap", #"{"deviceId":"video0"}"#)
        #expect(bad.code == 1 && err?["code"] == "INVALID_REQUEST", "a pipeline node is not a camera: \(bad.stdout)")
    }

    @Test func aPi5HasTwoCamerasAndClipsIn720pWithLibx264() throws {
        let pi = try Self.pi(.pi5, list: "list-pi5-two.txt"); defer { pi.cleanup() }
        let (_, list) = try pi.cam.invoke("camera.list")
        let names = (list?["devices"]?.arrayValue ?? []).map { $0["name"]?.stringValue ?? "" }
        #expect(names == ["Camera Module 3 (imx708)", "HQ Camera (imx477)", "fake"] || names.prefix(2) == ["Camera Module 3 (imx708)", "HQ Camera (imx477)"],
                "\(String(describing: list))")
        // The HQ camera has no autofocus: no autofocus options.
        let (_, hq) = try pi.cam.invoke("camera.snap", #"{"deviceId":"csi1","maxWidth":640}"#)
        #expect(hq?["width"] == 640 && hq?["height"] == 480, "4056x3040 is 4:3: \(String(describing: hq?["width"]))")
        #expect(pi.calls.last?.contains("--camera 1") == true && pi.calls.last?.contains("autofocus") == false, "\(pi.calls)")
        let (r, clip) = try pi.cam.invoke("camera.clip", #"{"deviceId":"csi0","durationMs":1000,"includeAudio":false}"#)
        #expect(r.code == 0, "\(r.stdout) \(r.stderr)")
        #expect(clip?["format"] == "mp4" && clip?["durationMs"] == 1000 && clip?["hasAudio"] == false, "\(r.stdout.prefix(200))")
        let vid = try #require(pi.calls.last)
        #expect(vid.hasPrefix("vid --nopreview --camera 0 --timeout 1000 --width 1280 --height 720 --framerate 30 --codec libav " +
                              "--libav-format mp4 --libav-video-codec libx264 --output "), "\(vid)")
        let mp4 = try #require(clip?["base64"]?.stringValue.flatMap { Base64.decode($0) })
        let probe = try Self.ffprobe(mp4, in: pi.cam.dir)
        let video = try #require(probe["streams"]?.arrayValue?.first { $0["codec_type"] == "video" })
        #expect(video["width"] == 1280 && video["height"] == 720, "\(probe)")
        let frames = Int(video["nb_read_frames"]?.stringValue ?? "") ?? 0
        #expect((28...32).contains(frames), "1 s at 30 fps: \(frames) frames")
    }

    @Test func aPi4ClipUsesTheHardwareEncoderPathAndRecordsTheMicrophone() throws {
        var pi = try Self.pi(.pi4); defer { pi.cleanup() }
        let mic = try FakeMicrophone(); defer { mic.remove() }
        pi.cam.env["HOME"] = mic.home
        pi.cam.env["OPENCLAW_NODE_AUDIO_DEVICE"] = "fakemic"
        let (r, clip) = try pi.cam.invoke("camera.clip", #"{"durationMs":1000}"#)
        #expect(r.code == 0, "\(r.stdout) \(r.stderr)")
        #expect(clip?["hasAudio"] == true, "\(r.stdout.prefix(200))")
        let vid = try #require(pi.calls.last)
        #expect(vid.contains("--width 1920 --height 1080") && !vid.contains("libx264"), "\(vid)")
        #expect(vid.contains("--libav-audio --audio-source alsa --audio-device fakemic"), "\(vid)")
        let mp4 = try #require(clip?["base64"]?.stringValue.flatMap { Base64.decode($0) })
        let probe = try Self.ffprobe(mp4, in: pi.cam.dir)
        #expect(probe["streams"]?.arrayValue?.contains { $0["codec_type"] == "audio" } == true, "\(probe)")
    }

    @Test func aBusyCameraSaysWhoHoldsItAndAHungHelperIsStoppedWithItsChildren() throws {
        var pi = try Self.pi(.pi4); defer { pi.cleanup() }
        pi.cam.env["FAKE_RPICAM_MODE"] = "busy"
        // Another program holding the media controller (as PipeWire's libcamera monitor would).
        let holder = try BackgroundProcess("/bin/sh", ["-c", "exec 7<\(pi.cam.dir)/dev/media0; exec sleep 60"])
        defer { _ = holder.stop() }
        #expect(waitUntil(timeout: 5) { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(holder.pid)/fd/7")) != nil })
        let (r, err) = try pi.cam.invoke("camera.snap", #"{"deviceId":"csi0"}"#)
        #expect(r.code == 1 && err?["code"] == "CAMERA_BUSY", "\(r.stdout)")
        #expect(err?["message"]?.stringValue?.contains("held by sleep, pid \(holder.pid)") == true, "\(r.stdout)")
        // A helper that never ends: stopped at the invoke's deadline with its whole group.
        pi.cam.env["FAKE_RPICAM_MODE"] = "hang"
        let began = Date()
        let run = try runProcess(TestPaths.nodeBinary, ["invoke", "camera.snap", "--compact", "--config", pi.cam.config, "--local",
                                                        "--timeout", "3000", "--params", #"{"deviceId":"csi0"}"#], env: pi.cam.env)
        // Near the 3 s deadline, not never: the bound leaves room for the CLI's own start on a busy machine.
        #expect(Date().timeIntervalSince(began) < 20, "stopped near the 3 s deadline")
        #expect(run.stdout.contains("TIMEOUT") || run.stdout.contains("did not finish"), "\(run.stdout) \(run.stderr)")
        let left = try runProcess("/usr/bin/pgrep", ["-f", "sleep 1000"])
        #expect(left.stdout.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, "the helper's child was left running: \(left.stdout)")
    }

    @Test func whatIsMissingIsSaidAndNonPisNeverRunRpicam() throws {
        // A Pi 4 without rpicam-apps: the camera is not listed, and a snap of it says what to install.
        let bare = try Self.pi(.pi4, tools: false); defer { bare.cleanup() }
        let (_, list) = try bare.cam.invoke("camera.list")
        #expect((list?["devices"]?.arrayValue ?? []).map { $0["deviceType"]?.stringValue ?? "" } == ["v4l2"], "\(String(describing: list))")
        let (r, err) = try bare.cam.invoke("camera.snap", #"{"deviceId":"csi0"}"#)
        #expect(r.code == 1 && err?["code"] == "CAMERA_UNAVAILABLE", "\(r.stdout)")
        #expect(err?["message"]?.stringValue?.contains("Camera Module 3 (imx708)") == true &&
                err?["message"]?.stringValue?.contains("rpicam-apps") == true, "\(r.stdout)")
        let doctor = try runProcess(TestPaths.nodeBinary, ["doctor", "--config", bare.cam.config], env: bare.cam.env)
        #expect(doctor.stdout.contains("rpicam-apps"), "\(doctor.stdout)")
        // A PC: the stand-ins are on PATH, but nothing says a Pi camera is here.
        let pc = try Self.pi(.pc); defer { pc.cleanup() }
        let (_, pcList) = try pc.cam.invoke("camera.list")
        #expect((pcList?["devices"]?.arrayValue ?? []).allSatisfy { $0["deviceType"] == "v4l2" })
        #expect(pc.calls.isEmpty, "rpicam was run on a machine without a Pi camera port: \(pc.calls)")
        // backend: v4l2 on a Pi: its camera module is not offered.
        let v4l2 = try Self.pi(.pi4, camera: "backend: 'v4l2'"); defer { v4l2.cleanup() }
        let (_, only) = try v4l2.cam.invoke("camera.list")
        #expect((only?["devices"]?.arrayValue ?? []).count == 1 && v4l2.calls.isEmpty, "\(String(describing: only))")
    }

    @Test func theListTextIsReadDefensively() {
        let text = (try? String(contentsOfFile: Self.stubs + "/list-pi5-two.txt", encoding: .utf8)) ?? ""
        #expect(RpicamCamera.parse(text) == [
            RpicamCamera(index: 0, sensor: "imx708", width: 4608, height: 2592, libcameraId: "/base/axi/pcie@120000/rp1/i2c@88000/imx708@1a"),
            RpicamCamera(index: 1, sensor: "imx477", width: 4056, height: 3040, libcameraId: "/base/axi/pcie@120000/rp1/i2c@80000/imx477@1a")])
        #expect(RpicamCamera.parse("No cameras available!\n").isEmpty)
        #expect(RpicamCamera.parse("garbage : [x] (y)\n0 : [1x1]\n").isEmpty)
        #expect(RpicamCamera(index: 0, sensor: "imx477", width: 4056, height: 3040, libcameraId: "").size(maxWidth: 640) == (640, 480))
    }
}
