import Foundation
@testable import Support
@testable import TestSupport
import Testing

/// stt.* and tts.* through the real daemon: real recordings transcribed as well as Debian's
/// pocketsphinx_continuous does on the same audio (also resampled from 44.1 kHz stereo, as a phone
/// records), the microphone heard by stt.listen, and speech that is what espeak-ng itself writes
/// for the same text and voice (the offline recognizer cannot judge synthetic speech).
@Suite(.serialized) struct SpeechCommandsTests {
    static let data = TalkRealSpeechTests.data

    /// A recording as a WAV file's bytes: 16 kHz mono as it is, or (`phone`) 44.1 kHz stereo.
    static func wav(_ recording: String, phone: Bool = false) throws -> Data {
        let script = """
            import audioop, sys, wave
            src, phone = sys.argv[1], sys.argv[2] == "1"
            if src.endswith(".wav"):
                w = wave.open(src); pcm = w.readframes(w.getnframes())
            else:
                pcm = open(src, "rb").read()
            rate, channels = 16000, 1
            if phone:
                pcm, _ = audioop.ratecv(pcm, 2, 1, 16000, 44100, None); pcm = audioop.tostereo(pcm, 2, 1, 1); rate, channels = 44100, 2
            w = wave.open(sys.argv[3], "wb"); w.setnchannels(channels); w.setsampwidth(2); w.setframerate(rate)
            w.writeframes(pcm); w.close()
            """
        let path = TestPaths.tempDir("wav") + "/in.wav"
        defer { try? FileManager.default.removeItem(atPath: PathName.directory(path)) }
        let r = try runProcess("/usr/bin/python3", ["-W", "ignore", "-c", script, data + "/" + recording, phone ? "1" : "0", path])
        guard r.code == 0 else { throw TestFailure("cannot make the WAV: \(r.stderr)") }
        return try Data(contentsOf: URL(fileURLWithPath: path))
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/pocketsphinx_continuous"), "needs pocketsphinx"))
    func transcribeHearsRealRecordingsAsWellAsPocketsphinxContinuous() throws {
        let r = try TalkPTTTests.Rig(infile: "/dev/zero"); defer { r.stop() }
        let dir = TestPaths.tempDir("stt"); defer { try? FileManager.default.removeItem(atPath: dir) }
        let chosen = TalkRealSpeechTests.recordings.filter { ["goforward.raw", "tidigits/dhd.2934z.raw"].contains($0.file) || $0.file.hasPrefix("librivox/") }
        #expect(chosen.count >= 4, "\(chosen.map(\.file))")
        var nodeTotal = 0, theirTotal = 0
        for (i, (recording, said)) in chosen.enumerated() {
            let wav = try Self.wav(recording, phone: i % 2 == 1)
            // The reference decodes the same audio at 16 kHz mono.
            let raw = dir + "/\(i).raw"
            try Self.wav(recording).dropFirst(44).write(to: URL(fileURLWithPath: raw))
            let theirs = try TalkRealSpeechTests.pocketsphinxContinuous(raw)
            let params: JSONValue = ["audioBase64": .string(wav.base64EncodedString()), "format": "wav", "language": "en-US"]
            let reply = try r.call("stt.transcribe", params.jsonString(), wait: 60)
            let p = try #require(reply["payload"], "\(recording): \(reply) \(r.node.log.suffix(1500))")
            let heard = p["text"]?.stringValue ?? ""
            let node = TalkRealSpeechTests.wordsInCommon(heard, said), them = TalkRealSpeechTests.wordsInCommon(theirs, said)
            nodeTotal += node; theirTotal += them
            print("stt.transcribe \(recording)\(i % 2 == 1 ? " (44.1 kHz stereo)" : ""): node \(node) \"\(heard)\" | pocketsphinx_continuous \(them) \"\(theirs)\" | said \"\(said)\"")
            #expect(p["transcribed"] == true && p["engineEffective"] == "pocketsphinx" && p["language"] == "en-US", "\(p)")
            #expect(node + 1 >= them, "\(recording): node \"\(heard)\", pocketsphinx_continuous \"\(theirs)\"")
            let seconds = Double(try Self.wav(recording).count - 44) / 32_000
            #expect(abs(Double(p["durationMs"]?.intValue ?? 0) / 1000 - seconds) < 0.05, "\(p["durationMs"] ?? .null) for \(seconds) s")
        }
        #expect(nodeTotal >= theirTotal, "node \(nodeTotal) words, pocketsphinx_continuous \(theirTotal)")
        // Refusals: no audio and no recording, both, a language not installed, bytes that are no audio.
        for (params, words) in [("{}", "audioBase64 or maxDurationMs required"),
                                ("{\"audioBase64\":\"UklGRg==\",\"maxDurationMs\":1000}", "do not go together"),
                                ("{\"maxDurationMs\":1000,\"language\":\"de-DE\"}", "language de-DE is not installed"),
                                ("{\"audioBase64\":\"aGVsbG8gd29ybGQ=\"}", "audioBase64:")] {
            let refused = try r.call("stt.transcribe", params)
            #expect(refused["error"]?["code"] == "INVALID_REQUEST" && refused["error"]?["message"]?.stringValue?.contains(words) == true, "\(params): \(refused)")
        }
    }

    @Test func listenHearsTheMicrophoneAndTranscribeRecordsForItsDuration() throws {
        do {
            let r = try TalkPTTTests.Rig(); defer { r.stop() }  // the microphone says "go forward ten meters"
            // timeoutMs beyond the range is brought into it (120 s), as the Windows node does.
            let listened = try #require(try r.call("stt.listen", "{\"timeoutMs\":999999}", wait: 40)["payload"], "\(r.node.log.suffix(1500))")
            #expect(listened["text"] == "go forward ten meters", "\(listened)")
            #expect((listened["durationMs"]?.intValue ?? 0) < 10_000, "ended on silence: \(listened)")
            // Nothing went to the agent: the words are the caller's.
            #expect(r.gw.all("node_event").filter { $0["name"] == "voice.transcript" }.isEmpty)
        }
        let again = try TalkPTTTests.Rig(); defer { again.stop() }
        let started = Date()
        let recorded = try #require(try again.call("stt.transcribe", "{\"maxDurationMs\":5000}", wait: 40)["payload"], "\(again.node.log.suffix(1500))")
        #expect(recorded["text"] == "go forward ten meters" && recorded["durationMs"] == 5000, "\(recorded)")
        #expect(Date().timeIntervalSince(started) >= 4.9, "recorded the whole 5 s")
    }

    /// espeak-ng's own WAV of the same text and voice, at its normal rate and at `rate`.
    static func espeakNg(_ text: String, voice: String = "en", rate: Int? = nil) throws -> (samples: [Int16], rate: Int) {
        let path = TestPaths.tempDir("espeak") + "/ref.wav"
        defer { try? FileManager.default.removeItem(atPath: PathName.directory(path)) }
        let r = try runProcess("/usr/bin/espeak-ng", ["-v", voice, "-w", path] + (rate.map { ["-s", "\($0)"] } ?? []) + [text])
        guard r.code == 0 else { throw TestFailure("espeak-ng: \(r.stderr)") }
        return try Self.pcm(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
    }

    /// The index of the last sample louder than silence.
    static func speechEnd(_ s: [Int16]) -> Int { s.lastIndex { abs(Int($0)) > 100 } ?? 0 }

    /// Pearson correlation of the RMS of 20 ms frames (at 22.05 kHz) over the shorter of the two.
    static func envelopeCorrelation(_ a: [Int16], _ b: [Int16]) -> Double {
        func envelope(_ x: [Int16]) -> [Double] {
            stride(from: 0, to: x.count - 441, by: 441).map { i in (x[i..<(i + 441)].reduce(0.0) { $0 + Double($1) * Double($1) } / 441).squareRoot() }
        }
        let ea = envelope(a), eb = envelope(b), n = min(ea.count, eb.count)
        guard n > 2 else { return 0 }
        let ma = ea.prefix(n).reduce(0, +) / Double(n), mb = eb.prefix(n).reduce(0, +) / Double(n)
        var num = 0.0, da = 0.0, db = 0.0
        for i in 0..<n { num += (ea[i] - ma) * (eb[i] - mb); da += (ea[i] - ma) * (ea[i] - ma); db += (eb[i] - mb) * (eb[i] - mb) }
        return num / (da * db).squareRoot()
    }

    /// The samples and rate of a PCM WAV file (its `data` chunk found, whatever precedes it).
    static func pcm(_ wav: [UInt8]) throws -> (samples: [Int16], rate: Int) {
        guard wav.count > 44, Array(wav[0..<4]) == Array("RIFF".utf8) else { throw TestFailure("not a WAV file") }
        let rate = Int(wav[24]) | Int(wav[25]) << 8 | Int(wav[26]) << 16
        var at = 12
        while at + 8 <= wav.count {
            let size = Int(wav[at + 4]) | Int(wav[at + 5]) << 8 | Int(wav[at + 6]) << 16 | Int(wav[at + 7]) << 24
            if Array(wav[at..<(at + 4)]) == Array("data".utf8) {
                let end = min(wav.count, at + 8 + size)
                let samples = stride(from: at + 8, to: end - 1, by: 2).map { Int16(bitPattern: UInt16(wav[$0]) | UInt16(wav[$0 + 1]) << 8) }
                return (samples, rate)
            }
            at += 8 + size
        }
        throw TestFailure("no data chunk")
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/espeak-ng"), "needs espeak-ng"))
    func speechIsWhatEspeakNgWritesAndIsPlayedOnTheSpeaker() throws {
        let r = try TalkPTTTests.Rig(infile: "/dev/zero"); defer { r.stop() }
        let text = "The package arrived at the front door at half past four."
        for rate: Int? in [nil, 260] {
            var params: [String: JSONValue] = ["text": .string(text), "output": "audio"]
            if let rate { params["rate"] = .number(Double(rate)) }
            let p = try #require(try r.call("tts.speak", JSONValue.object(params).jsonString())["payload"], "\(r.node.log.suffix(1500))")
            #expect(p["spoken"] == false && p["format"] == "wav" && p["contentType"] == "audio/wav" && p["provider"] == "espeak", "\(p)")
            let ours = try Self.pcm(Array(Data(base64Encoded: p["audioBase64"]?.stringValue ?? "") ?? Data()))
            let theirs = try Self.espeakNg(text, rate: rate)
            #expect(ours.rate == theirs.rate, "\(ours.rate) Hz, espeak-ng \(theirs.rate) Hz")
            // The same engine, voice and rate: the same speech. Not sample for sample: espeak-ng
            // carries state from one synthesis to the next (a fresh engine's first one is equal to
            // its program's; a later one is shifted by some milliseconds), so the speech's length
            // and its loudness over time are compared. espeak-ng's program also ends its file with
            // a pause (espeakENDPAUSE) that the node does not add.
            let ourEnd = Self.speechEnd(ours.samples), theirEnd = Self.speechEnd(theirs.samples)
            #expect(abs(Double(ourEnd - theirEnd)) <= Double(theirEnd) * 0.03, "rate \(rate ?? 175): speech ends at sample \(ourEnd), espeak-ng's at \(theirEnd)")
            let similarity = Self.envelopeCorrelation(ours.samples, theirs.samples)
            #expect(similarity > 0.85, "rate \(rate ?? 175): loudness envelopes correlate \(similarity)")
            #expect(abs(Double(p["durationMs"]?.intValue ?? 0) - Double(ours.samples.count) * 1000 / Double(ours.rate)) <= 1, "\(p["durationMs"] ?? .null)")
        }
        // The default output: played on the speaker, answered once played, as long as espeak-ng's.
        let spoken = try #require(try r.call("tts.speak", "{\"text\":\"\(text)\"}", wait: 40)["payload"], "\(r.node.log.suffix(1500))")
        #expect(spoken["spoken"] == true && spoken["audioBase64"] == nil, "\(spoken)")
        let reference = try Self.espeakNg(text)
        let played = TalkPTTTests.played(r.spoken, sampleRate: reference.rate)
        // As long as espeak-ng's speech without its end pause (about 0.3 s), and loud.
        #expect(abs(played.seconds - Double(spoken["durationMs"]?.intValue ?? 0) / 1000) < 0.1 && played.seconds <= Double(reference.samples.count) / Double(reference.rate)
                && played.rms > 300, "\(played) \(spoken)")
        // Refused: blank, too long, another provider.
        for (params, words) in [("{\"text\":\"  \"}", "text required"),
                                ("{\"text\":\"\(String(repeating: "a", count: 5001))\"}", "at most 5000"),
                                ("{\"text\":\"hi\",\"provider\":\"elevenlabs\"}", "provider must be espeak")] {
            let refused = try r.call("tts.speak", params)
            #expect(refused["error"]?["message"]?.stringValue?.contains(words) == true, "\(refused)")
        }
        let status = try #require(try r.call("tts.status")["payload"])
        #expect(status["effectiveProvider"] == "espeak" && status["providers"]?.arrayValue?.first?["isReady"] == true, "\(status)")
        let stt = try #require(try r.call("stt.status")["payload"])
        #expect(stt["readiness"] == "ready" && stt["engine"] == "pocketsphinx", "\(stt)")
        // In the gateway's dangerous set: doctor's allowlist snippet names every one of them.
        let doctor = try r.node.cli(["doctor"]).stdout
        let snippet = doctor.split(separator: "\n").first { $0.contains("commands: { allow:") } ?? ""
        for command in ["stt.transcribe", "stt.listen", "stt.status", "tts.speak", "tts.status"] {
            #expect(snippet.contains("\"\(command)\""), "\(command) not in \(snippet)\n\(doctor)")
        }
    }
}
