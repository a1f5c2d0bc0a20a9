import CPocketSphinx
import FoundationEssentials
import Glibc
import Kit
import Support

/// Wake-word spotting with pocketsphinx's keyword search (kws) over the same en-US acoustic model:
/// cheap enough to run continuously. One decoder per set of phrases; phrases whose words are not
/// in the pronunciation dictionary cannot be spotted and are left out (with a reason).
final class KeywordSpotter: @unchecked Sendable {
    let phrases: [String]
    private let config: OpaquePointer
    private let decoder: OpaquePointer

    /// Words the dictionary can pronounce (loaded once per model directory).
    private static let lock = Lock()
    nonisolated(unsafe) private static var words: (dir: String, set: Set<String>)?

    static func knownWords(_ modelDir: String) -> Set<String> {
        lock.withLock {
            if let w = words, w.dir == modelDir { return w.set }
            var set = Set<String>()
            if let text = try? String(contentsOfFile: modelDir + "/cmudict-en-us.dict", encoding: .utf8) {
                for line in text.split(separator: "\n") {
                    guard let word = line.split(separator: " ", maxSplits: 1).first else { continue }
                    set.insert(String(word.split(separator: "(").first ?? word))
                }
            }
            words = (modelDir, set)
            return set
        }
    }

    /// Splits triggers into those the dictionary can say and those it cannot.
    static func spottable(_ triggers: [String], modelDir: String) -> (usable: [String], unknown: [String]) {
        let known = knownWords(modelDir)
        var usable: [String] = [], unknown: [String] = []
        for t in triggers {
            let phrase = t.lowercased().split(whereSeparator: { !$0.isLetter && $0 != "'" }).joined(separator: " ")
            if !phrase.isEmpty, phrase.split(separator: " ").allSatisfy({ known.contains(String($0)) }) { usable.append(phrase) }
            else { unknown.append(t) }
        }
        return (usable, unknown)
    }

    init(phrases: [String], modelDir: String, keywordFile: String) throws(NodeError) {
        guard !phrases.isEmpty else { throw NodeError.invalidRequest("no wake phrases") }
        // One phrase per line with its detection threshold (1e-20: measured on Debian's recordings).
        let list = phrases.map { "\($0) /1e-20/" }.joined(separator: "\n") + "\n"
        guard FileManager.default.createFile(atPath: keywordFile, contents: Data(list.utf8), attributes: [.posixPermissions: 0o600]) else {
            throw NodeError.unavailable("cannot write the wake phrase list \(keywordFile)")
        }
        let args = ["openclaw-node", "-hmm", modelDir + "/en-us", "-dict", modelDir + "/cmudict-en-us.dict", "-kws", keywordFile,
                    "-logfn", "/dev/null"]
        var cargs = args.map { strdup($0) }
        defer { cargs.forEach { free($0) } }
        guard let config = cargs.withUnsafeMutableBufferPointer({ cps_config(Int32($0.count), $0.baseAddress) }) else {
            throw NodeError.unavailable("voice wake: pocketsphinx refused its configuration")
        }
        guard let decoder = ps_init(config) else {
            cmd_ln_free_r(config)
            throw NodeError.unavailable("voice wake: pocketsphinx could not load the keyword search")
        }
        self.phrases = phrases
        self.config = config
        self.decoder = decoder
        ps_start_utt(decoder)
    }

    deinit {
        ps_end_utt(decoder)
        ps_free(decoder)
        cmd_ln_free_r(config)
    }

    /// Feeds samples; the phrase heard, when one was (the search then starts over).
    func feed(_ samples: UnsafeBufferPointer<Int16>) -> String? {
        guard let base = samples.baseAddress, !samples.isEmpty else { return nil }
        guard ps_process_raw(decoder, base, samples.count, 0, 0) >= 0 else { return nil }
        var score: Int32 = 0
        guard let hyp = ps_get_hyp(decoder, &score), hyp.pointee != 0 else { return nil }
        let heard = String(cString: hyp).trimmed()
        ps_end_utt(decoder)
        ps_start_utt(decoder)
        return heard.isEmpty ? nil : heard
    }
}
