import Foundation
@testable import Support
@testable import TestSupport
import Testing

/// The capabilities that need outside things (an X display, a camera, gpsd, a microphone), used in
/// a Debian 13 root by the package's own binary (`openclaw-node invoke <cmd> --local`), each with a
/// stand-in for the hardware: Xvfb on this machine, its socket bound into the root; the fake V4L2
/// library built for the root's architecture; gpsd inside the root fed by Tests/gpsd's NMEA
/// feeder over the root's own loopback; ALSA's `type file` PCM playing recorded speech. The root
/// has the package's Recommends (scripts/testroot --recommends), since these run with no network.
/// Everything a check starts inside the root runs in the root's PID namespace, stopped by PID and
/// gone with it; everything it writes is under the root's /tmp.
enum ReleaseRootCapabilities {
    /// A config of its own for one check, in the root's /tmp/<name>/config.json5 (state beside it).
    static func config(_ root: ReleaseRoot, _ name: String, _ body: String) throws -> String {
        let dir = root.path + "/tmp/" + name
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let text = "{ node: { stateDir: '/tmp/\(name)/state' }, presence: { mode: 'always' }, \(body) }"
        _ = FileManager.default.createFile(atPath: dir + "/config.json5", contents: Data(text.utf8))
        return "/tmp/\(name)/config.json5"
    }

    /// screen.snapshot (scaled to maxWidth) and a 1 s screen.record of an Xvfb display.
    static func screen(_ root: ReleaseRoot) throws {
        let x = try Xvfb(screens: ["640x480x24"]); defer { x.stop() }
        let painter = try XPainter(x.display)
        painter.fill(x: 0, y: 0, width: 640, height: 480, rgb: 0x00ff00)
        let config = try config(root, "screen", "capabilities: { screen: { backend: 'x11' } }")
        // The root's commands have a network namespace of their own, where X's abstract socket is
        // out of reach: the display is reached through its socket file.
        let x11 = ["/tmp/.X11-unix"]
        let snap = try root.run("DISPLAY=\(x.display) openclaw-node invoke screen.snapshot --local --compact --config \(config) " +
                                #"--params '{"format": "png", "maxWidth": 320, "includePointer": false}'"#, binds: x11)
        #expect(snap.code == 0, "\(snap.stdout)\(snap.stderr)")
        let image = try ImageChecks.image(try #require(JSONValue.parse(snap.stdout), "\(snap.stdout)"))
        #expect(image.width <= 320 && image.width > 0 && image.height * 4 == image.width * 3, "\(image.width)x\(image.height)")
        #expect(ImageChecks.near(image.pixel(x: image.width / 2, y: image.height / 2), 0x00ff00), "the display's green")

        let record = try root.run("DISPLAY=\(x.display) openclaw-node invoke screen.record --local --compact --config \(config) " +
                                  #"--params '{"durationMs": 1000, "fps": 10}'"#, binds: x11)
        #expect(record.code == 0, "\(record.stdout.prefix(500))\(record.stderr)")
        guard let payload = JSONValue.parse(record.stdout), let b64 = payload["base64"]?.stringValue,
              let data = Data(base64Encoded: b64) else { Issue.record("no MP4 in \(record.stdout.prefix(500))"); return }
        #expect(payload["format"] == "mp4")
        let file = TestPaths.tempDir("rec13") + "/clip.mp4"
        defer { try? FileManager.default.removeItem(atPath: (file as NSString).deletingLastPathComponent) }
        try data.write(to: URL(fileURLWithPath: file))
        let probe = try ImageChecks.ffprobe(file)
        let stream = probe["streams"]?.arrayValue?.first
        #expect(stream?["codec_name"] == "h264", "\(probe)")
        let frames = Int(stream?["nb_read_frames"]?.stringValue ?? "") ?? 0
        #expect((5...15).contains(frames), "frames: \(frames)")
        let duration = Double(probe["format"]?["duration"]?.stringValue ?? "") ?? 0
        #expect(abs(duration - 1.0) < 0.25, "duration: \(duration)")
    }

    /// Tests/fakes/fakev4l2.c for `arch`: this machine's compiler for amd64; for arm64 Swift's
    /// clang against the arm64 sysroot the package was cross-compiled with (it has libturbojpeg).
    static func fakeCamera(arch: String, into out: String) throws {
        try compile(TestPaths.repoRoot + "/Tests/fakes/fakev4l2.c", arch: arch, into: out,
                    flags: ["-shared", "-fPIC", "-ldl", "-lturbojpeg", "-lpthread"])
    }

    /// A C file of Tests/fakes built for `arch` (see fakeCamera), with `flags` (libraries last).
    static func compile(_ source: String, arch: String, into out: String, flags extra: [String]) throws {
        let flags = ["-O2", "-Wall", "-o", out, source] + extra
        let r: ProcessResult
        if arch == "amd64" {
            r = try runProcess("/usr/bin/cc", flags)
        } else {
            let cache = (ProcessInfo.processInfo.environment["XDG_CACHE_HOME"] ?? NSHomeDirectory() + "/.cache") + "/openclaw-node"
            // Any clang cross-compiles; the one beside /opt/swift's Swift, else Debian's.
            let clang = FileManager.default.isExecutableFile(atPath: "/opt/swift/usr/bin/clang") ? "/opt/swift/usr/bin/clang" : "/usr/bin/clang"
            r = try runProcess(clang, ["--target=aarch64-linux-gnu", "--sysroot=\(cache)/sysroot-trixie-arm64",
                                       "-fuse-ld=lld"] + flags)
        }
        guard r.code == 0 else { throw TestFailure("building \((source as NSString).lastPathComponent) for \(arch) failed: \(r.stderr)") }
    }

    /// camera.snap from the fake V4L2 device (a placeholder file the preloaded library answers for).
    static func camera(_ root: ReleaseRoot, arch: String) throws {
        let config = try config(root, "cam", "capabilities: { camera: { } }")
        try FileManager.default.createDirectory(atPath: root.path + "/tmp/cam/dev", withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: root.path + "/tmp/cam/dev/video0", contents: Data())
        try fakeCamera(arch: arch, into: root.path + "/tmp/cam/libfakev4l2.so")
        // The device directory is an environment setting (no config key): OPENCLAW_NODE_CAMERA_DIR.
        let snap = try root.run("LD_PRELOAD=/tmp/cam/libfakev4l2.so OCN_FAKE_V4L2=/tmp/cam/dev/video0:YUYV,MJPG:640x480 " +
                                "OPENCLAW_NODE_CAMERA_DIR=/tmp/cam/dev OPENCLAW_NODE_AUDIO_DEVICE=ocn-no-such-mic " +
                                #"openclaw-node invoke camera.snap --local --compact --config \#(config) --params '{"maxWidth": 320}'"#)
        #expect(snap.code == 0, "\(snap.stdout)\(snap.stderr)")
        guard let payload = JSONValue.parse(snap.stdout) else { Issue.record("no JSON: \(snap.stdout)"); return }
        #expect(payload["format"] == "jpg" && payload["width"] == 320 && payload["height"] == 240, "\(payload["width"]?.jsonString() ?? "-")x\(payload["height"]?.jsonString() ?? "-")")
        let image = try ImageChecks.image(payload)
        #expect(image.width == 320 && image.height == 240)
        // The fake's quadrants, away from their edges and the black square in the middle.
        for (px, py) in [(80, 60), (240, 60), (80, 180), (240, 180)] {
            let want = QuadrantPattern.rgb(x: px, y: py, width: 320, height: 240)
            #expect(ImageChecks.near(image.pixel(x: px, y: py), want, tolerance: 32), "(\(px),\(py)) \(ImageChecks.hex(image.pixel(x: px, y: py)))")
        }
    }

    /// Realtime talk's echo canceller as packaged for this release (libopenclaw-aec.so on Debian
    /// 13's webrtc-audio-processing 1.x, AEC3), measured by Tests/fakes/aec_erle.c in the root on a
    /// real recording as the reply and its echo as the microphone.
    static func echoCanceller(_ root: ReleaseRoot, arch: String) throws {
        let dir = root.path + "/tmp/aec"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try compile(TestPaths.repoRoot + "/Tests/fakes/aec_erle.c", arch: arch, into: dir + "/aec_erle", flags: ["-ldl", "-lm"])
        let ff = try runProcess("/usr/bin/ffmpeg", ["-hide_banner", "-loglevel", "error", "-i",
                                                    "/usr/share/pocketsphinx/test/data/librivox/sense_and_sensibility_01_austen_64kb-0870.wav",
                                                    "-ar", "48000", "-ac", "1", "-f", "s16le", "-y", dir + "/reply.raw"])
        try #require(ff.code == 0, "\(ff.stderr)")
        let r = try root.run("/tmp/aec/aec_erle /usr/lib/openclaw-node/libopenclaw-aec.so /tmp/aec/reply.raw")
        #expect(r.code == 0, "\(r.stdout)\(r.stderr)")
        #expect(r.stdout.contains("webrtc-audio-processing 1.x"), "\(r.stdout)")
        let erle = r.stdout.split(separator: "\n").first { $0.hasPrefix("ERLE ") }.flatMap { Double($0.dropFirst(5)) } ?? 0
        #expect(erle >= 15, "echo return loss enhancement \(erle) dB on Debian 13")
        print("echo canceller in the Debian 13 root: \(r.stdout.split(separator: "\n").joined(separator: "; "))")
    }

    /// openclaw-node-libcamera (libcamera in process) against Debian's own libcamera and its
    /// virtual test camera: a YAML the test writes (bars, 640x480), and Tests/fakes/fake_udmabuf.c
    /// standing in for the dma-buf provider this machine's kernel lacks. Without the YAML no camera
    /// is listed and a snap says why; with it the list shows it, the snap is a JPEG of its bars and
    /// a clip has a second of frames.
    static func libcamera(_ root: ReleaseRoot, deb: String, arch: String) throws {
        let name = (deb as NSString).lastPathComponent
        #expect(FileManager.default.createFile(atPath: root.path + "/tmp/" + name, contents: FileManager.default.contents(atPath: deb)))
        let install = try root.run("apt-get install -y --no-install-recommends /tmp/\(name)", timeout: 600)
        try #require(install.code == 0, "\(install.stdout)\(install.stderr)")
        let config = try config(root, "lc", "capabilities: { camera: { backend: 'libcamera' } }")
        try FileManager.default.createDirectory(atPath: root.path + "/tmp/lc/dev", withIntermediateDirectories: true)
        try compile(TestPaths.repoRoot + "/Tests/fakes/fake_udmabuf.c", arch: arch, into: root.path + "/tmp/lc/fake_udmabuf.so",
                    flags: ["-shared", "-fPIC", "-ldl"])
        let env = "LD_PRELOAD=/tmp/lc/fake_udmabuf.so LIBCAMERA_PIPELINES_MATCH_LIST=virtual LIBCAMERA_LOG_LEVELS='*:ERROR' " +
            "OPENCLAW_NODE_CAMERA_DIR=/tmp/lc/dev OPENCLAW_NODE_AUDIO_DEVICE=ocn-no-such-mic"
        func invoke(_ command: String, _ params: String = "{}") throws -> (ProcessResult, JSONValue?) {
            let r = try root.run("\(env) openclaw-node invoke \(command) --local --compact --config \(config) --params '\(params)'")
            return (r, JSONValue.parse(r.stdout))
        }
        // libcamera's tracing library (lttng-ust) leaves its wait files in /dev/shm, a plain
        // directory in this root (tmpfs on a real system): not the package's, removed here.
        defer {
            for f in (try? FileManager.default.contentsOfDirectory(atPath: root.path + "/dev/shm")) ?? [] where f.hasPrefix("lttng-ust-wait") {
                try? FileManager.default.removeItem(atPath: root.path + "/dev/shm/" + f)
            }
        }
        // No virtual camera configured: nothing to serve, and both commands say why.
        for command in ["camera.list", "camera.snap"] {
            let (r, why) = try invoke(command)
            #expect(r.code != 0 && why?["code"] == "CAMERA_UNAVAILABLE", "\(command): \(r.stdout)")
            #expect(why?["message"]?.stringValue?.contains("lists no camera") == true, "\(command): \(r.stdout)")
        }

        // The YAML's directory is made here and removed with what it holds (nothing else is there).
        let pipelineDir = root.path + "/usr/share/libcamera/pipeline", yamlDir = pipelineDir + "/virtual"
        let madePipelineDir = !FileManager.default.fileExists(atPath: pipelineDir)
        try FileManager.default.createDirectory(atPath: yamlDir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: madePipelineDir ? pipelineDir : yamlDir) }
        let yaml = "%YAML 1.1\n---\n\"Virtual0\":\n  supported_formats:\n  - width: 640\n    height: 480\n    frame_rates: [30]\n" +
            "  test_pattern: \"bars\"\n  location: \"CameraLocationFront\"\n  model: \"OpenClaw Test Camera\"\n"
        try yaml.write(toFile: yamlDir + "/virtual.yaml", atomically: true, encoding: .utf8)
        let (r2, list) = try invoke("camera.list")
        #expect(r2.code == 0, "\(r2.stdout)\(r2.stderr)")
        #expect(list?["devices"] == [["id": "libcamera:Virtual0", "name": "OpenClaw Test Camera", "position": "front", "deviceType": "libcamera"]],
                "\(r2.stdout)")
        let (r3, snap) = try invoke("camera.snap", #"{"maxWidth": 640}"#)
        #expect(r3.code == 0, "\(r3.stdout.prefix(300))\(r3.stderr)")
        if let snap {
            #expect(snap["format"] == "jpg" && snap["width"] == 640 && snap["height"] == 480, "\(r3.stdout.prefix(200))")
            let image = try ImageChecks.image(snap)
            // The eight colour bars (the virtual camera scrolls them from frame to frame): each
            // bar's luma (white 255 … black 0 after NV12's video range is expanded) is found on
            // the middle row.
            let luma = stride(from: 0, to: 640, by: 10).map { x -> Double in
                let p = image.pixel(x: x, y: 240)
                return 0.299 * Double(p.r) + 0.587 * Double(p.g) + 0.114 * Double(p.b)
            }
            for bar in [255.0, 226, 179, 150, 105, 77, 29, 0] {
                #expect(luma.contains { abs($0 - bar) < 16 }, "no bar of luma \(bar) in \(luma.map { Int($0) })")
            }
        }
        let (r4, clip) = try invoke("camera.clip", #"{"durationMs": 1000, "includeAudio": false}"#)
        #expect(r4.code == 0, "\(r4.stdout.prefix(300))\(r4.stderr)")
        guard let b64 = clip?["base64"]?.stringValue, let data = Data(base64Encoded: b64) else { Issue.record("no clip: \(r4.stdout.prefix(300))"); return }
        let file = TestPaths.tempDir("lc13") + "/clip.mp4"
        defer { try? FileManager.default.removeItem(atPath: (file as NSString).deletingLastPathComponent) }
        try data.write(to: URL(fileURLWithPath: file))
        let probe = try ImageChecks.ffprobe(file)
        let stream = probe["streams"]?.arrayValue?.first
        #expect(stream?["width"] == 640 && stream?["height"] == 480, "\(probe)")
        let frames = Int(stream?["nb_read_frames"]?.stringValue ?? "") ?? 0
        // At most the rate allows; at least enough to be a clip and not a still. How many of the 30
        // an emulated arm64 camera pipeline gets through in 1 s is the machine's business (19 under
        // qemu-user beside the other test runs).
        #expect((5...32).contains(frames), "1 s at 30 fps: \(frames) frames")
    }

    /// location.get from gpsd inside the root, which reads NMEA from Tests/gpsd/nmea_feeder.py
    /// (python3 is among the Recommends) over the root's own loopback.
    static func location(_ root: ReleaseRoot) throws {
        let config = try config(root, "gps", "capabilities: { location: { enabled: true, gpsd: '127.0.0.1:2947' } }")
        let feeder = TestPaths.repoRoot + "/Tests/gpsd/nmea_feeder.py"
        try FileManager.default.copyItem(atPath: feeder, toPath: root.path + "/tmp/gps/nmea_feeder.py")
        // The feeder runs until its stdin closes: a FIFO this shell holds open (fd 3) and closes at
        // the end. Each wait is bounded.
        let r = try root.run("""
            cd /tmp/gps && mkfifo feeder.in || exit 1
            waitfor() { i=0; until grep -q "$1" "$2" 2>/dev/null; do i=$((i+1)); [ $i -lt 150 ] || { echo "no $1 in $2" >&2; cat "$2" >&2; return 1; }; sleep 0.1; done; }
            python3 nmea_feeder.py --port 29470 --fix '{"lat": 59.3293, "lon": 18.0686, "alt": 28.0, "hdop": 0.9}' < feeder.in > feeder.out &
            feeder=$!
            exec 3> feeder.in
            waitfor port feeder.out || exit 1
            gpsd -N -n -S 2947 -F /tmp/gps/gpsd.sock tcp://127.0.0.1:29470 2> gpsd.log &
            gpsd=$!
            waitfor client feeder.out && openclaw-node invoke location.get --local --compact --config \(config) --params '{"desiredAccuracy": "precise"}'
            rc=$?
            kill $gpsd; wait $gpsd; exec 3>&-; wait $feeder
            [ $rc = 0 ] || cat gpsd.log >&2
            exit $rc
            """, loopback: true)
        #expect(r.code == 0, "\(r.stdout)\(r.stderr)")
        let fix = JSONValue.parse(r.stdout)
        #expect(abs((fix?["lat"]?.doubleValue ?? 0) - 59.3293) < 1e-6 && abs((fix?["lon"]?.doubleValue ?? 0) - 18.0686) < 1e-6, "\(r.stdout)")
        #expect(fix?["source"] == "gps" && fix?["altitudeMeters"]?.doubleValue == 28, "\(r.stdout)")
    }

    /// talk.ptt.once recognising "go forward ten meters" (Debian's pocketsphinx-testdata, from this
    /// machine) through an ALSA file PCM; with no gateway it recognises and reports "offline".
    static func talk(_ root: ReleaseRoot) throws {
        let config = try config(root, "talk", "capabilities: { talk: { enabled: true, captureDevice: 'fakemic' }, " +
                                "camera: { enabled: false }, screen: { enabled: false }, canvas: { enabled: false } }")
        try FileManager.default.copyItem(atPath: "/usr/share/pocketsphinx/test/data/goforward.raw", toPath: root.path + "/tmp/talk/goforward.raw")
        let asoundrc = "pcm.fakemic {\n type file\n slave.pcm \"null\"\n file \"/dev/null\"\n infile \"/tmp/talk/goforward.raw\"\n format \"raw\"\n}\n"
        _ = FileManager.default.createFile(atPath: root.path + "/tmp/talk/.asoundrc", contents: Data(asoundrc.utf8))
        let r = try root.run("HOME=/tmp/talk openclaw-node invoke talk.ptt.once --local --compact --config \(config)")
        let v = JSONValue.parse(r.stdout)
        #expect(v?["status"] == "offline" && v?["transcript"] == "go forward ten meters", "\(r.stdout)\(r.stderr)")
    }
}
