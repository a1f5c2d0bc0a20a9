import Foundation
@testable import Kit
@testable import Support
@testable import TestSupport
import Testing

/// The microphone held by another program (MIC_BUSY) and a microphone that goes away mid-capture,
/// through the daemon's real ALSA path. A USB microphone's hw device admits one program at a
/// time; these machines have no sound hardware and no snd-aloop, and ALSA's `file` PCM can be
/// opened any number of times, so the device is Tests/fakes/exclusive_mic.c, loaded by alsa-lib
/// through its external-plugin interface: one opener at a time (others get EBUSY), Debian's recorded
/// speech at the real-time rate, and ENODEV once its "unplug" file exists. The other program
/// holding it is arecord.
@Suite(.serialized) struct TalkMicrophoneTests {
    static let plugin: Result<String, TestFailure> = {
        let dir = TestPaths.tempDir("alsa-plugin")
        let out = dir + "/libasound_module_pcm_exclusive.so"
        guard let r = try? runProcess("/usr/bin/cc", ["-shared", "-fPIC", "-DPIC", "-O2", "-Wall", "-o", out,
                                                     TestPaths.repoRoot + "/Tests/fakes/exclusive_mic.c", "-lasound"]),
              r.code == 0 else { return .failure(TestFailure("cc could not build exclusive_mic.c")) }
        return .success(out)
    }()

    final class Mic {
        let dir = TestPaths.tempDir("mic")
        var lock: String { dir + "/mic.lock" }
        var unplug: String { dir + "/unplugged" }
        func asound(plugin: String, infile: String) -> String {
            "pcm_type.exclusive { lib \"\(plugin)\" }\n" +
            "pcm.usbmic { type exclusive infile \"\(infile)\" lock \"\(lock)\" unplug \"\(unplug)\" }\n"
        }
        deinit { try? FileManager.default.removeItem(atPath: dir) }
    }

    @Test func anotherProgramHoldingTheMicrophoneIsMicBusy() throws {
        let plugin = try Self.plugin.get()
        let mic = Mic()
        let r = try TalkPTTTests.Rig(device: "usbmic", asound: mic.asound(plugin: plugin, infile: TalkPTTTests.goForward))
        defer { r.stop() }
        #expect(r.gw.all("connect").last?["caps"]?.arrayValue?.contains("talk") == true, "advertised: the device opens")
        // Another program records from it.
        let other = try BackgroundProcess("/usr/bin/arecord", ["-q", "-D", "usbmic", "-f", "S16_LE", "-r", "16000", "-c", "1",
                                                                "-d", "60", "/dev/null"], env: r.node.env)
        defer { other.stop() }
        #expect(waitUntil(timeout: 10) { Self.isHeld(mic.lock) }, "arecord holds the microphone: \(other.log)")
        for command in ["talk.ptt.start", "talk.ptt.once"] {
            let busy = try r.call(command)
            #expect(busy["error"]?["code"] == "MIC_BUSY", "\(command): \(busy)")
            #expect(busy["error"]?["message"]?.stringValue?.contains("another program is using the microphone") == true, "\(busy)")
        }
        // Once the other program lets go, the same device works.
        other.stop()
        let once = try #require(try r.call("talk.ptt.once")["payload"], "\(r.node.log.suffix(1500))")
        #expect(once["transcript"] == "go forward ten meters" && once["status"] == "queued", "\(once)")
    }

    @Test func aMicrophoneThatGoesAwayIsAnErrorNotAHang() throws {
        let plugin = try Self.plugin.get()
        let mic = Mic()
        // Silence: `once` would otherwise wait for speech until its 12 s cap.
        let r = try TalkPTTTests.Rig(device: "usbmic", asound: mic.asound(plugin: plugin, infile: "/dev/zero"))
        defer { r.stop() }
        let unplug = mic.unplug
        DispatchQueue.global().asyncAfter(deadline: .now() + 1.5) { _ = FileManager.default.createFile(atPath: unplug, contents: nil) }
        let started = Date()
        let once = try r.call("talk.ptt.once")
        let took = Date().timeIntervalSince(started)
        #expect(once["error"]?["code"] == "UNAVAILABLE", "\(once)")
        #expect(once["error"]?["message"]?.stringValue?.contains("the microphone stopped working") == true, "\(once)")
        #expect(took < 11.9, "answered when the device went away, not at the 12 s cap (which starts after the call): \(took) s")
        // Start/stop: the same. And while it is gone, start says so.
        try FileManager.default.removeItem(atPath: mic.unplug)
        _ = try #require(try r.call("talk.ptt.start")["payload"]?["captureId"])
        try? FileManager.default.removeItem(atPath: mic.unplug + ".seen")  // the first unplug's
        _ = FileManager.default.createFile(atPath: mic.unplug, contents: nil)
        // Once the node's reader has been told the device is gone (the fake says so with a file).
        #expect(waitUntil(timeout: 20) { FileManager.default.fileExists(atPath: mic.unplug + ".seen") })
        let stopped = try r.call("talk.ptt.stop")
        #expect(stopped["error"]?["code"] == "UNAVAILABLE", "\(stopped)")
        let gone = try r.call("talk.ptt.start")
        #expect(gone["error"]?["code"] == "UNAVAILABLE" && gone["error"]?["message"]?.stringValue?.contains("captureDevice") == true, "\(gone)")
        #expect(r.node.log.contains("the microphone stopped working"), "logged: \(r.node.log.suffix(1500))")
    }

    /// Voice wake's microphone goes away: wake says so and stops listening, keeps trying (10 s,
    /// then 20 s: still gone), and listens again once the device is back.
    @Test func voiceWakeSurvivesAMicrophoneThatGoesAway() throws {
        let plugin = try Self.plugin.get()
        let mic = Mic()
        let r = try TalkPTTTests.Rig(device: "usbmic", wake: true, asound: mic.asound(plugin: plugin, infile: "/dev/zero"))
        defer { r.stop() }
        r.gw.command(["cmd": "raw", "text": .string((["type": "event", "event": "voicewake.changed",
                                                    "payload": ["triggers": ["computer"]]] as JSONValue).jsonString())])
        #expect(waitUntil(timeout: 10) { r.node.log.contains("for voice wake: \"computer\"") }, "\(r.node.log.suffix(1500))")
        _ = FileManager.default.createFile(atPath: mic.unplug, contents: nil)
        #expect(waitUntil(timeout: 10) { r.node.log.contains("voice wake: the microphone stopped working") }, "\(r.node.log.suffix(1500))")
        #expect(waitUntil(timeout: 15) { r.node.log.contains("voice wake cannot listen") && r.node.log.contains("trying again in 20") },
                "the first retry finds it still gone: \(r.node.log.suffix(1500))")
        try FileManager.default.removeItem(atPath: mic.unplug)
        #expect(waitUntil(timeout: 25) { r.node.log.components(separatedBy: "for voice wake: \"computer\"").count > 2 },
                "listening again: \(r.node.log.suffix(1500))")
    }

    /// Whether some process holds an flock on `path` (the fake device's hold).
    static func isHeld(_ path: String) -> Bool {
        let fd = open(path, O_RDWR)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        if flock(fd, LOCK_EX | LOCK_NB) == 0 { flock(fd, LOCK_UN); return false }
        return true
    }
}
