import Foundation
@testable import Kit
@testable import TalkCapability
@testable import TestSupport
import Testing

/// The offline recognizer on real human speech: Debian's pocketsphinx-testdata recording
/// "go forward ten meters" (16 kHz mono s16le), fed in 100 ms chunks as a microphone would.
@Suite(.serialized) struct TalkRecognizerTests {
    static let goForward = "/usr/share/pocketsphinx/test/data/goforward.raw"

    static func samples(_ path: String) throws -> [Int16] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        return data.withUnsafeBytes { raw in Array(raw.bindMemory(to: Int16.self)).map { Int16(littleEndian: $0) } }
    }

    static func decode(_ r: SpeechRecognizer, _ samples: [Int16]) throws -> (text: String, heardSpeech: Bool) {
        try r.begin()
        var heard = false
        try samples.withUnsafeBufferPointer { all in  // untyped: a typed throw here crashes Swift 6.0's SILGen
            var i = 0
            while i < all.count {
                let n = min(1600, all.count - i)
                try r.feed(UnsafeBufferPointer(rebasing: all[i..<(i + n)]))
                heard = heard || r.hearsSpeech
                i += n
            }
        }
        return (try r.finish(), heard)
    }

    /// Spots `phrase` in `samples` with `r`'s keyword search, fed 20 ms at a time as a microphone
    /// would: the phrase heard, or nil.
    static func spots(_ r: SpeechRecognizer, _ phrase: String, in samples: [Int16], listFile: String) throws -> String? {
        try r.setWakePhrases([phrase], file: listFile)
        try r.beginSpotting()
        var heard: String?
        samples.withUnsafeBufferPointer { all in
            var i = 0
            while i < all.count, heard == nil {
                let n = min(320, all.count - i)
                heard = r.spot(UnsafeBufferPointer(rebasing: all[i..<(i + n)]))
                i += n
            }
        }
        return heard
    }

    @Test func decodesRealSpeech() throws {
        let r = try PocketSphinxRecognizer()
        let audio = try Self.samples(Self.goForward)
        let first = try Self.decode(r, audio)
        #expect(first.text == "go forward ten meters")
        #expect(first.heardSpeech)
        // Kept warm: a second utterance on the same decoder gives the same answer.
        #expect(try Self.decode(r, audio).text == "go forward ten meters")
    }

    /// The language model comes and goes; wake-phrase spotting works with or without it, and
    /// recognition after a release loads it again.
    @Test func theLanguageModelIsLoadedAndGivenBack() throws {
        let audio = try Self.samples(Self.goForward)
        let dir = TestPaths.tempDir("lm"); defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try PocketSphinxRecognizer(prepareNow: false)
        #expect(!r.isReady)
        func spots(_ phrase: String) throws -> String? { try Self.spots(r, phrase, in: audio, listFile: dir + "/k.txt") }
        #expect(try spots("forward") == "forward", "spotting needs no language model")
        #expect(try Self.decode(r, audio).text == "go forward ten meters", "begin() loads it")
        #expect(r.isReady)
        try r.beginSpotting()
        r.release()
        #expect(!r.isReady)
        #expect(try spots("forward") == "forward", "the wake words survive the dictionary swap")
        #expect(try spots("computer") == nil)
        #expect(try Self.decode(r, audio).text == "go forward ten meters", "and recognition comes back")
    }

    @Test func silenceIsNothing() throws {
        let r = try PocketSphinxRecognizer()
        let result = try Self.decode(r, [Int16](repeating: 0, count: 16_000))
        #expect(result.text.isEmpty, "\(result.text)")
        #expect(!result.heardSpeech)
    }

    @Test func missingModelSaysWhatToInstall() {
        do {
            _ = try PocketSphinxRecognizer(modelDir: "/nonexistent/model")
            Issue.record("a recognizer without a model")
        } catch {
            #expect(error.code == .unavailable && error.message.contains("apt install pocketsphinx-en-us"), "\(error)")
        }
    }
}
