@testable import Config
import Foundation
@testable import HostPresence
@testable import Kit
import Media
@testable import NodeCLI
@testable import Registry
@testable import Runtime
@testable import ScreenCapability
@testable import Store
@testable import Support
import Testing

/// A deterministic fake microphone: an ALSA `type file` PCM over the `null` PCM whose capture data
/// comes from a raw S16_LE 48 kHz mono sine (`infile`). It lives in $HOME/.asoundrc of a temp dir,
/// so only node processes started with HOME=<dir> see it (ALSA_CONFIG_PATH would replace the
/// whole stock configuration instead of adding to it).
struct FakeMicrophone {
    static let frequency = 440.0
    let home: String

    init(seconds: Int = 6) throws {
        home = TestPaths.tempDir("mic")
        let rate = 48_000
        var pcm = Data(capacity: rate * seconds * 2)
        for i in 0..<(rate * seconds) {
            let v = Int16(8000 * sin(2 * Double.pi * FakeMicrophone.frequency * Double(i) / Double(rate)))
            withUnsafeBytes(of: v.littleEndian) { pcm.append(contentsOf: $0) }
        }
        try pcm.write(to: URL(fileURLWithPath: home + "/sine.raw"))
        let asoundrc = """
        pcm.fakemic {
            type file
            slave.pcm "null"
            file "/dev/null"
            infile "\(home)/sine.raw"
            format "raw"
        }
        """
        try Data(asoundrc.utf8).write(to: URL(fileURLWithPath: home + "/.asoundrc"))
    }

    func remove() { try? FileManager.default.removeItem(atPath: home) }
}

enum AudioProbe {
    /// A clip recorded with the fake microphone: H.264 + 48 kHz AAC of `seconds`, and the mic's
    /// sine comes back loud and at its frequency near the start and the end.
    static func expectH264WithFakeMicAudio(_ file: String, seconds: Double) throws {
        let streams = try streams(file)
        let video = stream(streams, "video"), audio = stream(streams, "audio")
        #expect(video?["codec_name"] == "h264")
        #expect(audio?["codec_name"] == "aac", "\(streams)")
        #expect(audio?["sample_rate"] == "48000")
        #expect(abs(duration(audio) - seconds) < 0.15, "audio duration \(duration(audio))")
        #expect(abs(duration(video) - seconds) < 0.15, "video duration \(duration(video))")
        let pcm = try samples(file)
        #expect(abs(Double(pcm.count) / 48_000 - seconds) < 0.15, "decoded \(pcm.count) samples")
        guard pcm.count > 38_400 else { return }
        for part in [pcm[4800..<19200], pcm[(pcm.count - 19200)..<(pcm.count - 4800)]] {
            #expect(rms(part) > 3000, "rms \(rms(part))")
            #expect(abs(frequency(part) - FakeMicrophone.frequency) < 15, "frequency \(frequency(part))")
        }
    }

    /// Streams of an MP4 with their type, codec and duration.
    static func streams(_ file: String) throws -> [JSONValue] {
        let r = try runProcess("/usr/bin/ffprobe", ["-v", "error", "-print_format", "json", "-show_entries",
                                                     "stream=codec_type,codec_name,sample_rate,channels,duration", file])
        guard r.code == 0, let v = JSONValue.parse(r.stdout) else { throw TestFailure("ffprobe failed: \(r.stderr)") }
        return v["streams"]?.arrayValue ?? []
    }

    static func stream(_ streams: [JSONValue], _ type: String) -> JSONValue? {
        streams.first { $0["codec_type"]?.stringValue == type }
    }

    static func duration(_ stream: JSONValue?) -> Double { Double(stream?["duration"]?.stringValue ?? "") ?? 0 }

    /// The audio decoded back to 48 kHz mono S16 samples.
    static func samples(_ file: String) throws -> [Int16] {
        let out = (file as NSString).deletingLastPathComponent + "/audio.raw"
        let r = try runProcess("/usr/bin/ffmpeg", ["-v", "error", "-i", file, "-map", "0:a", "-f", "s16le", "-ac", "1",
                                                    "-ar", "48000", "-y", out])
        guard r.code == 0 else { throw TestFailure("ffmpeg audio decode failed: \(r.stderr)") }
        let data = try Data(contentsOf: URL(fileURLWithPath: out))
        return data.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
    }

    /// Rising zero crossings per second over `samples` (a sine's frequency).
    static func frequency(_ samples: ArraySlice<Int16>, rate: Double = 48_000) -> Double {
        var crossings = 0
        var prev = samples.first ?? 0
        for s in samples.dropFirst() { if prev < 0 && s >= 0 { crossings += 1 }; prev = s }
        return Double(crossings) / (Double(samples.count) / rate)
    }

    static func rms(_ samples: ArraySlice<Int16>) -> Double {
        guard !samples.isEmpty else { return 0 }
        return (samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(samples.count)).squareRoot()
    }
}

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
        #expect(ScreenTest.near(try ScreenTest.frame(of: file, at: 1.0).pixel(x: 60, y: 60), 0x00ff00, tolerance: 40))
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
        #expect(ScreenTest.near(try ScreenTest.frame(of: file, at: 0.5).pixel(x: 60, y: 60), 0xff0000, tolerance: 40))
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
