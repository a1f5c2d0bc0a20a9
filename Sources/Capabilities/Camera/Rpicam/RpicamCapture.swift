import Glibc
import Kit
import Media
import Support

/// camera.snap and camera.clip on a CSI camera through rpicam-still and rpicam-vid: the same
/// params, results and errors as the V4L2 path. Each run gets its own process group and a
/// deadline inside the invoke's; at it the group is interrupted (rpicam-vid closes its file on
/// SIGINT) and then killed.
struct RpicamCapture {
    let tools: RpicamTools
    let camera: RpicamCamera
    let detection: CSIDetection
    let settings: CameraSettings
    let log: Logger

    /// rpicam-still runs its preview this long before the capture so exposure and white balance
    /// settle (its own default is 5 s; they converge well within one); `warmup: never` skips it.
    static let settleMs = 1000

    /// The daemon's own environment (rpicam and libcamera read theirs from it), libcamera quiet.
    static func environment(_ settings: CameraSettings) -> [String: String] {
        var env = ProcessEnvironment.current
        env["PATH"] = settings.toolPath
        env["LC_ALL"] = "C"
        if env["LIBCAMERA_LOG_LEVELS"] == nil { env["LIBCAMERA_LOG_LEVELS"] = "*:ERROR" }
        return env
    }
    private var environment: [String: String] { Self.environment(settings) }

    func snap(_ p: CameraSnapParams, budget: PayloadBudget, deadline: InvokeDeadline, cancel: CancelFlag) throws(NodeError) -> CameraSnapResult {
        let size = camera.size(maxWidth: p.maxWidth)
        let settle = settings.warmup == .never ? 0 : Self.settleMs
        var args = ["--nopreview", "--camera", "\(camera.index)", "--width", "\(size.width)", "--height", "\(size.height)",
                    "--quality", "\(p.jpegQuality)", "--encoding", "jpg"]
        args += settings.warmup == .never && p.delayMs == 0
            ? ["--immediate", "--timeout", "1"] : ["--timeout", "\(max(p.delayMs, settle))"]
        if CSIDetection.hasAutofocus(sensor: camera.sensor) { args += ["--autofocus-mode", "auto", "--autofocus-on-capture"] }
        args += ["--output", "-"]
        let limit = deadline.bounding(.milliseconds(p.delayMs) + .seconds(20), endingBefore: .milliseconds(500), atLeast: .seconds(1))
        let out = run(tools.still, args, timeout: limit, outputCap: PayloadBudget.rawBytes(fittingBase64: budget.stillImageBase64Bytes) + 1,
                      cancel: cancel)
        if out.overCap {
            throw CameraError.tooLarge("the photo does not fit the gateway's payload as base64; ask for a smaller maxWidth or quality")
        }
        try check(out, "rpicam-still", limit)
        guard let dims = JPEGSize.of(out.stdout) else {
            throw CameraError.unavailable("\(PathName.lastComponent(tools.still)) gave no JPEG (\(out.stdout.count) bytes): \(RpicamFailure.lastLines(out.stderr))")
        }
        log.debug("camera.snap \(camera.deviceId) (\(camera.sensor)): \(dims.width)x\(dims.height), \(out.stdout.count) bytes")
        return CameraSnapResult(base64: Base64.encode(out.stdout), width: dims.width, height: dims.height)
    }

    func clip(_ p: CameraClipParams, budget: PayloadBudget, deadline: InvokeDeadline, cancel: CancelFlag) throws(NodeError) -> CameraClipResult {
        // A Pi 5 encodes in software (libx264): 720p there, 1080p on the Pi 4's hardware encoder.
        let size = camera.size(maxWidth: detection.isPi5 ? 1280 : 1920)
        let durationMs = p.durationMs
        guard let dir = Self.privateTemporaryDirectory() else { throw CameraError.unavailable("cannot create a temporary directory for the clip") }
        defer { try? FileSystem.remove(dir) }
        let file = dir + "/clip.mp4"
        var args = ["--nopreview", "--camera", "\(camera.index)", "--timeout", "\(durationMs)", "--width", "\(size.width)",
                    "--height", "\(size.height)", "--framerate", "30", "--codec", "libav", "--libav-format", "mp4"]
        if detection.isPi5 { args += ["--libav-video-codec", "libx264"] }
        let audio = p.wantsAudio && microphonePresent()
        if audio { args += ["--libav-audio", "--audio-source", "alsa", "--audio-device", settings.audioDevice] }
        args += ["--output", file]
        let limit = deadline.bounding(.milliseconds(durationMs) + .seconds(20), endingBefore: .milliseconds(500), atLeast: .seconds(1))
        let out = run(tools.vid, args, timeout: limit, outputCap: 1 << 20, cancel: cancel)
        try check(out, "rpicam-vid", limit)
        guard let mp4 = FileSystem.readBytes(file), mp4.count > 8 else {
            throw CameraError.unavailable("\(PathName.lastComponent(tools.vid)) wrote no clip: \(RpicamFailure.lastLines(out.stderr))")
        }
        guard mp4.count <= budget.mediaBytes else {
            throw CameraError.tooLarge("the clip reached \(mp4.count) bytes, over what fits in the gateway's payload; record fewer seconds (durationMs)")
        }
        log.debug("camera.clip \(camera.deviceId): \(size.width)x\(size.height), \(durationMs) ms, \(mp4.count) bytes\(audio ? ", with audio" : "")")
        return CameraClipResult(base64: Base64.encode(mp4), durationMs: durationMs, hasAudio: audio)
    }

    private func run(_ exe: String, _ args: [String], timeout: Duration, outputCap: Int, cancel: CancelFlag) -> ToolProcess.Outcome {
        var run = ToolProcess(executable: exe, arguments: args, outputCap: outputCap, timeout: timeout)
        run.environment = environment
        run.keepStderr = true
        run.interruptGrace = .seconds(2)
        return run.runBlocking(cancel)
    }

    private func check(_ out: ToolProcess.Outcome, _ what: String, _ limit: Duration) throws(NodeError) {
        if out.cancelled { throw CameraError.cancelled() }
        if let busy = RpicamFailure.busy(out.stderr, devices: settings.deviceDir) { throw busy }
        if out.timedOut {
            throw NodeError(.timeout, "\(what) did not finish within \(limit.milliseconds) ms and was stopped: \(RpicamFailure.lastLines(out.stderr))")
        }
        if let e = out.error { throw CameraError.unavailable("\(what): \(e)") }
        guard out.status == 0 else {
            throw CameraError.unavailable("\(what) failed (exit \(out.status ?? -1)): \(RpicamFailure.lastLines(out.stderr))")
        }
    }

    /// Whether the clip's microphone opens (rpicam records it itself; it must not be held here).
    private func microphonePresent() -> Bool {
        guard let mic = try? MicrophoneCapture(device: settings.audioDevice, sampleRate: 48_000, channels: 1) else {
            log.info("camera.clip: no microphone (\(settings.audioDevice)); the clip has no audio")
            return false
        }
        mic.stop()
        return true
    }

    private static func privateTemporaryDirectory() -> String? {
        let base = ProcessEnvironment.current["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array("\(base)/ocn-rpicam-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else { return nil }
        return String(cString: made)
    }
}
