import Foundation
@testable import Support
@testable import TestSupport
import Testing

/// Push-to-talk on real recordings nobody made for these tests — an audiobook's passages (LibriVox,
/// "Sense and Sensibility"), read digits, card names, "go forward ten meters" — each after a second
/// of a quiet microphone's near-silence and followed by three, as a person at a device speaks. The
/// node's `talk.ptt.once` must hear them at least as well as Debian's `pocketsphinx_continuous` on
/// the same audio. (A fresh decoder took that first second's noise for speech that had ended, and
/// answered `empty` before the first word.)
@Suite(.serialized) struct TalkRealSpeechTests {
    static let data = "/usr/share/pocketsphinx/test/data"
    /// The recordings and what was said in them (the test data's own transcriptions; the
    /// tidigits file names its digits; goforward's words are its name).
    static var recordings: [(file: String, said: String)] {
        var out: [(String, String)] = [("goforward.raw", "go forward ten meters"), ("tidigits/dhd.2934z.raw", "two nine three four zero")]
        for (dir, transcription) in [("librivox", "librivox/transcription"), ("cards", "cards/cards.transcription")] {
            let text = (try? String(contentsOfFile: data + "/" + transcription, encoding: .utf8)) ?? ""
            for line in text.split(separator: "\n") {
                // "<s> words </s> (file-id)"
                guard let open = line.lastIndex(of: "("), let close = line.lastIndex(of: ")") else { continue }
                let id = String(line[line.index(after: open)..<close])
                let said = line[..<open].replacingOccurrences(of: "<s>", with: "").replacingOccurrences(of: "</s>", with: "")
                    .split(separator: " ").joined(separator: " ")
                if dir == "cards" && !["001", "005"].contains(id) { continue }  // two of five: the suite's time
                out.append(("\(dir)/\(id).wav", said))
            }
        }
        return out
    }

    /// 16 kHz mono S16_LE: 1 s of noise (±60, seeded), the recording, 3 s of noise.
    static func withQuietMicrophone(_ recording: String, into path: String) throws {
        let script = """
            import random, struct, sys, wave
            src, out = sys.argv[1], sys.argv[2]
            if src.endswith(".wav"):
                w = wave.open(src); assert w.getframerate() == 16000 and w.getnchannels() == 1 and w.getsampwidth() == 2
                speech = w.readframes(w.getnframes())
            else:
                speech = open(src, "rb").read()
            rng = random.Random(7)
            noise = lambda n: struct.pack("<%dh" % n, *[rng.randint(-60, 60) for _ in range(n)])
            open(out, "wb").write(noise(16000) + speech + noise(48000))
            """
        let r = try runProcess("/usr/bin/python3", ["-c", script, data + "/" + recording, path])
        guard r.code == 0 else { throw TestFailure("cannot build the input: \(r.stderr)") }
    }

    static func pocketsphinxContinuous(_ raw: String) throws -> String {
        let r = try runProcess("/usr/bin/pocketsphinx_continuous", ["-infile", raw, "-logfn", "/dev/null"], timeout: 120)
        return r.stdout.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.joined(separator: " ")
    }

    /// How many of `reference`'s words `heard` has, in order (longest common subsequence).
    static func wordsInCommon(_ heard: String, _ reference: String) -> Int {
        let a = heard.split(separator: " "), b = reference.split(separator: " ")
        guard !a.isEmpty, !b.isEmpty else { return 0 }
        var row = [Int](repeating: 0, count: b.count + 1)
        for x in a {
            var diagonal = 0
            for (j, y) in b.enumerated() {
                let up = row[j + 1]
                row[j + 1] = x == y ? diagonal + 1 : max(row[j + 1], row[j])
                diagonal = up
            }
        }
        return row[b.count]
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/pocketsphinx_continuous"), "needs pocketsphinx"))
    func onceHearsRealSpeechAsWellAsPocketsphinxContinuous() throws {
        let dir = TestPaths.tempDir("real-speech")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var rows: [String] = []
        var nodeTotal = 0, theirTotal = 0, wordsTotal = 0
        #expect(Self.recordings.count >= 9, "\(Self.recordings.map(\.file))")
        for (recording, said) in Self.recordings {
            let raw = dir + "/" + PathName.lastComponent(recording) + ".raw"
            try Self.withQuietMicrophone(recording, into: raw)
            let theirs = try Self.pocketsphinxContinuous(raw)
            // A fresh daemon each time: the decoder's noise estimate starts unset, as after a start.
            let r = try TalkPTTTests.Rig(infile: raw)
            defer { r.stop() }
            let once = try r.call("talk.ptt.once", nil, wait: 40)
            let heard = once["payload"]?["transcript"]?.stringValue ?? ""
            let node = Self.wordsInCommon(heard, said), them = Self.wordsInCommon(theirs, said)
            let words = said.split(separator: " ").count
            nodeTotal += node; theirTotal += them; wordsTotal += words
            rows.append("\(recording): node \(node)/\(words) \"\(heard)\" | pocketsphinx_continuous \(them)/\(words) \"\(theirs)\"")
            #expect(once["payload"]?["status"] != "empty" && !heard.isEmpty, "\(recording): \(once) \(r.node.log.suffix(1500))")
            // As well as pocketsphinx_continuous on each (a word's slack: the two decode in other pieces)…
            #expect(node + 1 >= them, "\(recording): the node heard \"\(heard)\" (\(node)/\(words)), pocketsphinx_continuous \"\(theirs)\" (\(them)/\(words))")
        }
        // …and at least as well in all.
        #expect(nodeTotal >= theirTotal, "node \(nodeTotal)/\(wordsTotal) words, pocketsphinx_continuous \(theirTotal)/\(wordsTotal)")
        rows.append("in all: node \(nodeTotal)/\(wordsTotal) words, pocketsphinx_continuous \(theirTotal)/\(wordsTotal)")
        print(rows.joined(separator: "\n"))
    }

    /// Held push-to-talk (start, the person reads, stop) over two passages with the pause between
    /// them, after the quiet second: the transcript has the words of both, at least as many as
    /// pocketsphinx_continuous finds in the same audio.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/pocketsphinx_continuous"), "needs pocketsphinx"))
    func startAndStopKeepEveryPassage() throws {
        let dir = TestPaths.tempDir("real-speech-held")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let passages = Self.recordings.filter { $0.file.hasSuffix("-0920.wav") || $0.file.hasSuffix("-0930.wav") }
        #expect(passages.count == 2)
        var raw = Data()
        for (i, p) in passages.enumerated() {
            try Self.withQuietMicrophone(p.file, into: dir + "/part\(i).raw")
            raw.append(try Data(contentsOf: URL(fileURLWithPath: dir + "/part\(i).raw")))
        }
        try raw.write(to: URL(fileURLWithPath: dir + "/held.raw"))
        let said = passages.map(\.said).joined(separator: " ")
        let theirs = try Self.pocketsphinxContinuous(dir + "/held.raw")
        let r = try TalkPTTTests.Rig(infile: dir + "/held.raw")
        defer { r.stop() }
        _ = try r.call("talk.ptt.start")
        // The file plays at real time: all of it, then a little of the silence after.
        Thread.sleep(forTimeInterval: Double(raw.count) / 32_000 + 0.5)
        let stopped = try #require(try r.call("talk.ptt.stop", wait: 40)["payload"], "\(r.node.log.suffix(2000))")
        let heard = stopped["transcript"]?.stringValue ?? ""
        let node = Self.wordsInCommon(heard, said), them = Self.wordsInCommon(theirs, said)
        print("held: node \(node)/\(said.split(separator: " ").count) \"\(heard)\" | pocketsphinx_continuous \(them) \"\(theirs)\"")
        #expect(node + 1 >= them && node * 2 >= said.split(separator: " ").count, "node \"\(heard)\" (\(node)), pocketsphinx_continuous \"\(theirs)\" (\(them))")
    }
}
