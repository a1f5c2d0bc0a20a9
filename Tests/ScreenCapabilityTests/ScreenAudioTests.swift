@testable import Config
import Foundation
@testable import HostPresence
@testable import Kit
import Media
@testable import NodeCLI
@testable import Registry
@testable import ScreenCapability
@testable import Store
@testable import Support
@testable import TestSupport
import Testing

/// screen.record with includeAudio: the real binary under Xvfb with the fake mic, and the
/// video-only fallback when no capture device can be opened.
@Suite(.serialized) struct ScreenAudioTests {
    @Test func recordsMicrophoneAudioAsAACThroughTheBinary() throws {
        let x = try Xvfb(screens: ["320x240x24"])
        defer { x.stop() }
        let painter = try XPainter(x.display)
        painter.fill(x: 0, y: 0, width: 320, height: 240, rgb: 0x00ff00)
        let mic = try FakeMicrophone()
        defer { mic.remove() }
        let config = ScreenTest.config(in: mic.home, screen: "backend: 'x11'")
        let r = try runProcess(TestPaths.nodeBinary, ["invoke", "screen.record", "--local", "--compact", "--config", config,
                                                     "--params", #"{"durationMs":2000,"includeAudio":true}"#],
                               env: ["HOME": mic.home, "PATH": "/usr/bin:/bin", "DISPLAY": x.display,
                                     "OPENCLAW_NODE_AUDIO_DEVICE": "fakemic", "OPENCLAW_NODE_LOG": "debug"])
        #expect(r.code == 0, "\(r.stderr)")
        guard let payload = JSONValue.parse(r.stdout) else { Issue.record("no JSON: \(r.stdout) \(r.stderr)"); return }
        #expect(payload["hasAudio"] == true, "\(r.stderr)")
        #expect(payload["durationMs"] == 2000)

        let file = try ScreenRecordTests.write(payload)
        defer { try? FileManager.default.removeItem(atPath: (file as NSString).deletingLastPathComponent) }
        try AudioProbe.expectH264WithFakeMicAudio(file, seconds: 2.0)
        #expect(ImageChecks.near(try ImageChecks.frame(of: file, at: 1.0).pixel(x: 60, y: 60), 0x00ff00, tolerance: 40))
    }

    @Test func aMissingMicrophoneRecordsVideoOnlyWithHasAudioFalse() async throws {
        let x = try Xvfb(screens: ["320x240x24"])
        defer { x.stop() }
        let painter = try XPainter(x.display)
        painter.fill(x: 0, y: 0, width: 320, height: 240, rgb: 0xff0000)
        let cap = ScreenCapability(settings: ScreenSettings(backend: .x11, display: x.display, audioDevice: "ocn-no-such-mic"))
        let payload = try await ScreenTest.invoke(cap, .record, #"{"durationMs": 1000, "fps": 10, "includeAudio": true}"#,
                                                  timeoutMs: 30_000)
        #expect(payload["hasAudio"] == false)
        let file = try ScreenRecordTests.write(payload)
        defer { try? FileManager.default.removeItem(atPath: (file as NSString).deletingLastPathComponent) }
        let streams = try AudioProbe.streams(file)
        #expect(AudioProbe.stream(streams, "audio") == nil)
        #expect(AudioProbe.stream(streams, "video")?["codec_name"] == "h264")
        #expect(abs(AudioProbe.duration(AudioProbe.stream(streams, "video")) - 1.0) < 0.15)
        #expect(ImageChecks.near(try ImageChecks.frame(of: file, at: 0.5).pixel(x: 60, y: 60), 0xff0000, tolerance: 40))
    }

    /// ALSA's stock `null` PCM (silence, not paced by hardware) works in-process without any config.
    @Test func microphoneDeliversRealTimeChunksOnTheMonotonicClock() throws {
        let mic = try MicrophoneCapture(device: "null")
        #expect(mic.sampleRate == 48_000 && mic.channels == 1)
        let queue = AudioChunkQueue()
        let started = monotonicNowNs()
        mic.start { queue.push($0) }
        usleep(400_000)
        #expect(mic.stop() == nil)
        #expect(mic.stop() == nil)  // idempotent
        let chunks = queue.takeAll()
        let frames = chunks.reduce(0) { $0 + $1.frames }
        // Paced to real time: about 0.4 s of audio, not the seconds a file/null PCM could give at once.
        #expect(frames > 48_000 * 3 / 10 && frames < 48_000 * 5 / 10, "\(frames) frames")
        guard let first = chunks.first else { return }
        #expect(first.timestampNs >= started && first.timestampNs < started + 100_000_000)
        for (a, b) in zip(chunks, chunks.dropFirst()) {
            #expect(b.timestampNs == a.timestampNs + UInt64(a.frames) * 1_000_000_000 / 48_000)
        }
    }

    @Test func recordingWithTheNullDeviceHasASilentAACTrackAndCancelsPromptly() async throws {
        let x = try Xvfb(screens: ["320x240x24"])
        defer { x.stop() }
        let cap = ScreenCapability(settings: ScreenSettings(backend: .x11, display: x.display, audioDevice: "null"))
        let payload = try await ScreenTest.invoke(cap, .record, #"{"durationMs": 1000, "includeAudio": true}"#, timeoutMs: 30_000)
        #expect(payload["hasAudio"] == true)
        let file = try ScreenRecordTests.write(payload)
        defer { try? FileManager.default.removeItem(atPath: (file as NSString).deletingLastPathComponent) }
        let audio = AudioProbe.stream(try AudioProbe.streams(file), "audio")
        #expect(audio?["codec_name"] == "aac")
        #expect(abs(AudioProbe.duration(audio) - 1.0) < 0.15)

        try await ScreenTest.expectRecordingCancelsPromptly(cap, #"{"durationMs": 20000, "includeAudio": true}"#)
        // The device was released: it opens again at once.
        let again = try MicrophoneCapture(device: "null")
        again.stop()
    }

    @Test func audioDeviceComesFromTheEnvironment() {
        let config = NodeConfig(environment: [:])
        #expect(ScreenSettings(config: config, environment: [:]).audioDevice == "default")
        #expect(ScreenSettings(config: config, environment: ["OPENCLAW_NODE_AUDIO_DEVICE": "fakemic"]).audioDevice == "fakemic")
    }

    @Test func microphoneErrorsAreTyped() {
        #expect(MicrophoneError.kind(forOpenError: -EBUSY) == .busy)
        #expect(MicrophoneError.kind(forOpenError: -ENOENT) == .unavailable)
        do {
            _ = try MicrophoneCapture(device: "ocn-no-such-mic")
            Issue.record("opening an unknown PCM must fail")
        } catch {
            #expect(error.kind == .unavailable)
            #expect(error.description.contains("ocn-no-such-mic"))
        }
    }

    @Test func audioTakesItsShareOfThePayloadBudget() throws {
        let silent = try RecordPlan.make(sourceWidth: 1920, sourceHeight: 1080, fps: 10, durationMs: 10_000, maxPayloadBytes: 512 * 1024)
        let withAudio = try RecordPlan.make(sourceWidth: 1920, sourceHeight: 1080, fps: 10, durationMs: 10_000,
                                            maxPayloadBytes: 512 * 1024, audioBitrate: 64_000)
        #expect(withAudio.video.maxBitrate == silent.video.maxBitrate - 64_000)
    }
}
