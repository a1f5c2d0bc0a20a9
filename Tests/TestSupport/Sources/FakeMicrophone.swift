import Foundation
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
