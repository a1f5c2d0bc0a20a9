import Glibc
import Kit
import Support

/// Raspberry Pi's camera programs (rpicam-apps, which Raspberry Pi OS rebuilds with every
/// libcamera it ships; bookworm's `libcamera-*` names too): the node runs them rather than linking
/// a libcamera whose ABI changes with each release.
struct RpicamTools: Sendable, Equatable {
    let hello: String
    let still: String
    let vid: String

    /// The three programs on `path` (the daemon's PATH), newest names first; nil when any is missing.
    static func find(path: String) -> RpicamTools? {
        for prefix in ["rpicam", "libcamera"] {
            if let h = Subprocess.findExecutable("\(prefix)-hello", path: path), let s = Subprocess.findExecutable("\(prefix)-still", path: path),
               let v = Subprocess.findExecutable("\(prefix)-vid", path: path) {
                return RpicamTools(hello: h, still: s, vid: v)
            }
        }
        return nil
    }

    /// The cameras rpicam sees (it asks libcamera); an error says what rpicam said.
    func cameras(environment: [String: String], devices: String, cancel: CancelFlag) throws(NodeError) -> [RpicamCamera] {
        var run = ToolProcess(executable: hello, arguments: ["--list-cameras"], outputCap: 1 << 20, timeout: .seconds(15))
        run.environment = environment
        run.keepStderr = true
        let out = run.runBlocking(cancel)
        if out.cancelled { throw CameraError.cancelled() }
        let text = String(decoding: out.stdout, as: UTF8.self) + "\n" + out.stderr
        if let busy = RpicamFailure.busy(text, devices: devices) { throw busy }
        guard out.status == 0 else {
            throw CameraError.unavailable("\(PathName.lastComponent(hello)) --list-cameras failed\(out.timedOut ? " (no answer in 15 s)" : ""): \(RpicamFailure.lastLines(text))")
        }
        return RpicamCamera.parse(text)
    }
}

/// What rpicam's failures mean for the caller.
enum RpicamFailure {
    /// libcamera's refusal when another process has the camera.
    static func busy(_ output: String, devices: String = "/dev") -> NodeError? {
        guard output.contains("failed to acquire camera") || output.contains("Pipeline handler in use by another process")
                || output.contains("Device or resource busy") else { return nil }
        let holder = holders(devices: devices).first.map { " (held by \($0))" } ?? ""
        return CameraError.busy("the camera is in use by another process\(holder); stop it, or wait until it ends")
    }

    /// Processes that hold a media controller or a video node open: the usual suspects are
    /// PipeWire's libcamera monitor, a leftover rpicam-vid, or a motion daemon.
    static func holders(devices dir: String = "/dev", proc: String = "/proc") -> [String] {
        var out: [String] = []
        let me = getpid()
        for entry in (try? FileSystem.contentsOfDirectory(proc)) ?? [] {
            guard let pid = Int32(entry), pid != me else { continue }
            let fdDir = "\(proc)/\(entry)/fd"
            for fd in (try? FileSystem.contentsOfDirectory(fdDir)) ?? [] {
                guard let target = try? FileSystem.destinationOfSymbolicLink(fdDir + "/" + fd), target.hasPrefix(dir + "/"),
                      PathName.lastComponent(target).hasPrefix("media") else { continue }
                let name = FileSystem.readText("\(proc)/\(entry)/comm")?.trimmed() ?? "?"
                out.append("\(name), pid \(pid)")
                break
            }
        }
        return out
    }

    /// The end of a helper's output, for an error message.
    static func lastLines(_ text: String) -> String {
        let lines = text.split(separator: "\n").map { $0.trimmed() }.filter { !$0.isEmpty }
        return lines.suffix(2).joined(separator: " / ")
    }
}
