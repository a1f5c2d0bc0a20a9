import Foundation
@testable import Kit
import Media
@testable import TalkCapability
@testable import TestSupport
import Testing

/// Push-to-talk finishes the utterance at the speaker's pause, while the silence window runs, and
/// starts again on the capture's audio when speech follows: the transcript must be the one a
/// single utterance over the same audio gives. Real pocketsphinx on Debian's recording, fed as
/// 20 ms microphone chunks into a capture whose microphone (ALSA's null PCM) is never started.
@Suite(.serialized) struct TalkEarlyFinishTests {
    static let rate = 16_000

    /// `samples` as 20 ms chunks with sample-clock timestamps from 1 s.
    static func chunks(_ samples: [Int16]) -> [AudioChunk] {
        stride(from: 0, to: samples.count, by: 320).map { i in
            let part = Array(samples[i..<min(i + 320, samples.count)])
            return AudioChunk(samples: part, frames: part.count, channels: 1,
                              timestampNs: 1_000_000_000 + UInt64(i) * 1_000_000_000 / UInt64(rate))
        }
    }

    /// The recording's own background (its quiet first 0.4 s) repeated to `seconds`.
    static func quiet(_ speech: [Int16], seconds: Double) -> [Int16] {
        let noise = Array(speech[800..<6400])
        return (0..<Int(seconds * Double(rate))).map { noise[$0 % noise.count] }
    }

    /// A capture as `start` begins one (nothing heard yet), fed `audio`, then stopped once the
    /// worker is done: the transcript and the capture's early finishes and replays.
    static func capture(_ audio: [Int16], _ ptt: PushToTalk) throws -> (text: String, early: Int, replays: Int, earlyText: String?) {
        let mic = try MicrophoneCapture(device: "null", sampleRate: rate, channels: 1)
        let capture = try ptt.adopt(mic: mic, preamble: [])
        capture.progress.withLock { $0.heardSpeech = false; $0.lastSpeechNs = 0 }
        for chunk in chunks(audio) { ptt.feed(chunk, capture) }
        #expect(capture.progress.wait(until: { !$0.working }, timeout: .seconds(60)), "the worker finished")
        let before = capture.progress.withLock { ($0.earlyFinishes, $0.replays, $0.early) }
        let done = try #require(try ptt.stop())
        return (done.transcript, before.0, before.1, before.2)
    }

    @Test func theTranscriptIsReadyBeforeTheEnd() throws {
        let r = try PocketSphinxRecognizer()
        let speech = try TalkRecognizerTests.samples(TalkRecognizerTests.goForward)
        let ptt = PushToTalk(recognizer: r, device: "null")
        let got = try Self.capture(speech + Self.quiet(speech, seconds: 0.6), ptt)
        // Finished at the pause after "meters", before stop: stop had only silence to end.
        #expect(got.early == 1 && got.replays == 0, "\(got)")
        #expect(got.earlyText == "go forward ten meters", "\(got)")
        #expect(got.text == "go forward ten meters", "\(got)")
    }

    @Test func speechAfterAPauseIsDecodedAsOneUtterance() throws {
        let r = try PocketSphinxRecognizer()
        let speech = try TalkRecognizerTests.samples(TalkRecognizerTests.goForward)
        // "go forward" (to 1.2 s), a pause long enough for an early finish, then "ten meters".
        let split = 19_200
        let audio = Array(speech[..<split]) + Self.quiet(speech, seconds: 1.0) + Array(speech[split...]) + Self.quiet(speech, seconds: 0.6)
        let whole = try TalkRecognizerTests.decode(r, audio).text
        #expect(whole.hasSuffix("ten meters"), "one utterance over the same audio: \(whole)")
        let got = try Self.capture(audio, PushToTalk(recognizer: r, device: "null"))
        #expect(got.early == 2 && got.replays == 1, "finished at both pauses, replayed once: \(got)")
        #expect(got.text == whole, "\(got)")
    }

    /// Other recordings of the test data (with pauses of their own), then silence: the
    /// early finishes and replays give what one utterance gives.
    @Test(arguments: ["numbers.raw", "something.raw"])
    func sameTranscriptAsOneUtterance(_ file: String) throws {
        let r = try PocketSphinxRecognizer()
        let speech = try TalkRecognizerTests.samples("/usr/share/pocketsphinx/test/data/" + file)
        let audio = speech + Self.quiet(try TalkRecognizerTests.samples(TalkRecognizerTests.goForward), seconds: 0.6)
        let whole = try TalkRecognizerTests.decode(r, audio).text
        #expect(!whole.isEmpty)
        let got = try Self.capture(audio, PushToTalk(recognizer: r, device: "null"))
        #expect(got.early >= 1, "\(got)")
        #expect(got.text == whole, "\(got)")
    }

    /// The phrase three times with the short pauses of speech between phrases (0.34 s, which the
    /// decoder hears as ~200 ms of silence): no early finish there, only at the end.
    @Test func shortPausesBetweenPhrasesAreNotFinishedAt() throws {
        let r = try PocketSphinxRecognizer()
        let speech = try TalkRecognizerTests.samples(TalkRecognizerTests.goForward)
        let phrase = Array(speech[7_200..<36_000]), pause = Array(speech[..<3_200])
        let audio = Array(speech[..<7_200]) + phrase + pause + phrase + pause + phrase + Self.quiet(speech, seconds: 0.6)
        let got = try Self.capture(audio, PushToTalk(recognizer: r, device: "null"))
        #expect(got.early == 1 && got.replays == 0, "finished at the end only: \(got)")
        #expect(got.text == "go forward ten meters go forward ten meters go forward ten meters", "\(got)")
    }
}

/// When an early finish starts: as late as the predicted decode allows, never before `after`.
@Suite struct EarlyFinishTimingTests {
    typealias EF = PushToTalk.EarlyFinish

    @Test func aLongerUtteranceStartsItsFinishEarlierButNeverBeforeTheFloor() {
        let pace = EF.Pace(nsPerAudioSecond: 40_000_000)
        let short = pace.silenceBeforeFinish(audioNs: 1_000_000_000), long = pace.silenceBeforeFinish(audioNs: 5_000_000_000)
        // 1 s: 40 ms predicted, +10 ms, +40 ms margin, before the 450 ms window ends.
        #expect(short == 360_000_000)
        #expect(long < short && long >= EF.after)
        #expect(pace.silenceBeforeFinish(audioNs: 60_000_000_000) == EF.after)
    }

    @Test func thePaceMovesHalfwayTowardsWhatAFinishTook() {
        var pace = EF.Pace(nsPerAudioSecond: 40_000_000)
        pace.learn(took: 40_000_000, audioNs: 2_000_000_000)  // 20 ms per audio second
        #expect(pace.nsPerAudioSecond == 30_000_000)
        pace.learn(took: 500_000_000, audioNs: 100_000_000)  // too short an utterance to learn from
        #expect(pace.nsPerAudioSecond == 30_000_000)
    }
}
