import Foundation
@testable import Kit
import Media
@testable import Support
@testable import TalkCapability
@testable import TestSupport
import Testing

/// Full duplex's echo canceller (libopenclaw-aec.so, WebRTC's) on real recordings: a LibriVox
/// passage as the reply the speaker plays, its echo as a room gives it back (delayed 60 ms,
/// attenuated, smeared by a short reflection) in the microphone, then the person saying "go
/// forward ten meters" once the reply has ended. The echo must mostly go, and the person must
/// still be heard — by pocketsphinx, as the relay's provider would.
@Suite(.serialized) struct TalkEchoCancellerTests {
    static let data = TalkRealSpeechTests.data

    /// A recording as 48 kHz samples (ffmpeg resamples it).
    static func samples48k(_ file: String) throws -> [Int16] {
        let out = TestPaths.tempDir("aec") + "/x.raw"
        defer { try? FileManager.default.removeItem(atPath: (out as NSString).deletingLastPathComponent) }
        let input = file.hasSuffix(".raw") ? ["-f", "s16le", "-ar", "16000", "-ac", "1", "-i", data + "/" + file] : ["-i", data + "/" + file]
        let r = try runProcess("/usr/bin/ffmpeg", ["-hide_banner", "-loglevel", "error"] + input + ["-ar", "48000", "-ac", "1", "-f", "s16le", "-y", out])
        try #require(r.code == 0, "\(r.stderr)")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: out))
        return bytes.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
    }

    static func energy(_ s: ArraySlice<Int16>) -> Double { s.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(1, s.count)) }

    @Test func theRepliesEchoGoesAndThePersonStays() throws {
        let aec = try EchoCanceller(directory: (TestPaths.nodeBinary as NSString).deletingLastPathComponent)
        let reply = try Self.samples48k("librivox/sense_and_sensibility_01_austen_64kb-0870.wav")
        let person = try Self.samples48k("goforward.raw")
        let rate = EchoCanceller.rate
        // The room: 60 ms delay at 0.5, a reflection 7 ms later at 0.2.
        let total = reply.count + rate / 2 + person.count
        var mic = [Int16](repeating: 0, count: total)
        for (i, s) in reply.enumerated() {
            for (delay, gain) in [(rate * 60 / 1000, 0.5), (rate * 67 / 1000, 0.2)] where i + delay < total {
                mic[i + delay] = Int16(clamping: Int(mic[i + delay]) + Int(Double(s) * gain))
            }
        }
        let personStart = reply.count + rate / 2
        for (i, s) in person.enumerated() { mic[personStart + i] = Int16(clamping: Int(mic[personStart + i]) + Int(s)) }
        // As the node feeds it: the reference as written (here at 24 kHz, as the speaker plays
        // the relay's audio), the microphone in 20 ms chunks, side by side.
        var down = Media.AudioResampler(from: rate, to: 24_000)
        let reference24 = down.process(reply + [Int16](repeating: 0, count: total - reply.count)) + down.flush()
        var out: [Int16] = []
        let chunk = rate / 50
        var r = 0
        for start in stride(from: 0, to: total, by: chunk) {
            let n = min(chunk / 2, reference24.count - r)  // 20 ms at 24 kHz
            if n > 0 { aec.render(Array(reference24[r..<(r + n)]), rate: 24_000); r += n }
            out += aec.capture(Array(mic[start..<min(total, start + chunk)]), delayMs: 140)
        }
        #expect(abs(out.count - total) < EchoCanceller.frame, "\(out.count) of \(total)")
        // Echo only, once it has converged (from 2 s to the reply's end): at least 15 dB less.
        let echoIn = Self.energy(mic[(2 * rate)..<reply.count]), echoOut = Self.energy(out[(2 * rate)..<min(out.count, reply.count)])
        let erle = 10 * log10(echoIn / max(1, echoOut))
        #expect(erle >= 15, "echo return loss enhancement \(erle) dB")
        // The person, after the reply: heard as they said it.
        let heard = try TalkRecognizerTests.decode(try PocketSphinxRecognizer(),
                                                   Self.to16k(Array(out[personStart..<min(out.count, personStart + person.count)]))).text
        #expect(heard == "go forward ten meters", "\(heard)")
        print("echo canceller \(aec.version): ERLE \(String(format: "%.1f", erle)) dB; heard \"\(heard)\"")
    }

    static func to16k(_ s: [Int16]) -> [Int16] {
        var r = Media.AudioResampler(from: 48_000, to: 16_000)
        return r.process(s) + r.flush()
    }
}
