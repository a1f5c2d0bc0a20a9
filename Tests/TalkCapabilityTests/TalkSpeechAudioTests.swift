import Foundation
@testable import Kit
@testable import TalkCapability
@testable import TestSupport
import Testing

/// The audio a gateway's talk.speak returns, decoded on the node: Debian's recorded human speech
/// ("go forward ten meters") encoded by ffmpeg as each format a provider may send, decoded by the
/// node's own decoders (libmpg123, libopusfile, its WAV reader), and checked by ear: the offline
/// recognizer must still hear the same words in what came out.
@Suite(.serialized) struct TalkSpeechAudioTests {
    /// `goforward.raw` encoded by ffmpeg with `args` (output options) into `name`.
    static func encoded(_ name: String, _ args: [String], in dir: String) throws -> [UInt8] {
        let out = dir + "/" + name
        let r = try runProcess("/usr/bin/ffmpeg", ["-hide_banner", "-loglevel", "error", "-f", "s16le", "-ar", "16000", "-ac", "1",
                                                   "-i", TalkRecognizerTests.goForward] + args + ["-y", out])
        try #require(r.code == 0, "ffmpeg: \(r.stderr)")
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: out)))
    }

    /// Back to the recognizer's 16 kHz by linear interpolation (a test-side check only).
    static func to16k(_ a: SpeechAudio) -> [Int16] {
        let step = Double(a.sampleRate) / 16_000
        return (0..<Int(Double(a.samples.count) / step)).map { i in
            let x = Double(i) * step, j = Int(x), f = x - Double(j)
            let b = a.samples[min(j + 1, a.samples.count - 1)]
            return Int16(Double(a.samples[j]) * (1 - f) + Double(b) * f)
        }
    }

    @Test(arguments: [
        ("reply.mp3", ["-ar", "24000", "-c:a", "libmp3lame", "-b:a", "48k"], nil as String?, 24_000),
        ("reply.ogg", ["-c:a", "libopus", "-b:a", "32k"], "opus_48000_32", 48_000),
        ("reply.wav", ["-ar", "22050", "-ac", "2"], "wav", 22_050),           // stereo: averaged to mono
        ("reply.pcm", ["-f", "s16le", "-ar", "24000"], "pcm_24000", 24_000),  // headerless, as requested
        ("hinted.mp3", ["-ar", "24000", "-c:a", "libmp3lame"], "pcm_24000", 24_000),  // a provider ignoring the hint
        // …with bare frames (no ID3 tag, no Xing header): recognised by two chained frame headers.
        ("bare.mp3", ["-ar", "22050", "-c:a", "libmp3lame", "-id3v2_version", "0", "-write_xing", "0"], "pcm_24000", 22_050),
    ])
    func decodesWhatProvidersReturn(name: String, args: [String], outputFormat: String?, rate: Int) throws {
        let dir = TestPaths.tempDir("speech"); defer { try? FileManager.default.removeItem(atPath: dir) }
        let bytes = try Self.encoded(name, args, in: dir)
        let format = SpeechFormat.detect(bytes, outputFormat: outputFormat, mimeType: nil, fileExtension: nil)
        let audio = try SpeechFormat.decode(bytes, as: format)
        #expect(audio.sampleRate == rate, "\(format)")
        #expect(abs(audio.seconds - 2.79) < 0.25, "the recording is 2.79 s: \(audio.seconds) s as \(format)")
        let heard = try TalkRecognizerTests.decode(try PocketSphinxRecognizer(), Self.to16k(audio))
        #expect(heard.text == "go forward ten meters", "\(name) as \(format): \(heard.text)")
    }

    @Test func garbageIsRefusedWithAReason() {
        let junk: [UInt8] = Array("this is not audio at all".utf8)
        #expect(SpeechFormat.detect(junk, outputFormat: "webm", mimeType: "audio/webm", fileExtension: ".webm") == .unsupported("webm"))
        for (format, says) in [(SpeechFormat.mp3, "MP3"), (.oggOpus, "Ogg/Opus"), (.wav, "WAV")] {
            do {
                _ = try SpeechFormat.decode(junk, as: format)
                Issue.record("\(format) decoded garbage")
            } catch {
                #expect(error.description.contains(says), "\(error)")
            }
        }
    }
}
