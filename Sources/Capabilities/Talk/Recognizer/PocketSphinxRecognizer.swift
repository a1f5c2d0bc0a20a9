import CPocketSphinx
import Glibc
import Kit
import Support

/// The offline English recognizer: Debian's pocketsphinx with its packaged en-US model. The
/// acoustic model stays loaded; the language model and the 134,000-word dictionary (about 90 MB
/// resident of the ~100 MB) are loaded by `prepare()` (about half a second here) and given back by
/// `release()`, so an idle node listening for wake phrases holds only what keyword spotting needs.
/// Used by one utterance at a time; the decoder and its config are owned here and freed in deinit.
public final class PocketSphinxRecognizer: SpeechRecognizer {
    public static let defaultModelDir = "/usr/share/pocketsphinx/model/en-us"
    public let name = "pocketsphinx en-us"
    private let modelDir: String
    private let config: OpaquePointer
    private let decoder: OpaquePointer
    private var inUtterance = false
    /// Whether the decoder is spotting wake phrases right now (its utterance is the keyword search's).
    private var spotting = false
    private static let lmSearch = "lm"
    private static let wakeSearch = "wake"
    /// The phrase list the keyword search reads, and the words it needs with their pronunciations
    /// (added to the small dictionary the decoder keeps while the language model is released).
    private var wakeFile: String?
    private var wakeWords: [(word: String, phones: String)] = []
    public private(set) var isReady = false

    static func modelFiles(_ modelDir: String) -> [String: String] {
        ["-hmm": modelDir + "/en-us", "-lm": modelDir + "/en-us.lm.bin", "-dict": modelDir + "/cmudict-en-us.dict"]
    }

    /// The first model file that is not there (nil: all are): a cheap check, without loading.
    public static func missingModelFile(_ modelDir: String) -> String? {
        modelFiles(modelDir).values.sorted().first { !FileSystem.exists($0) }
    }

    /// Loads the acoustic model, and the language model unless `prepareNow` is false;
    /// UNAVAILABLE with the package to install when the model is not there.
    public init(modelDir: String = PocketSphinxRecognizer.defaultModelDir, prepareNow: Bool = true) throws(NodeError) {
        let files = Self.modelFiles(modelDir)
        if let path = Self.missingModelFile(modelDir) {
            throw NodeError.unavailable("speech recognizer model not found (\(path)); install it: sudo apt install pocketsphinx-en-us")
        }
        self.modelDir = modelDir
        // An empty dictionary until prepare(): the full one only serves the language model.
        // The decoder's own log is a firehose of model details on stderr; the node logs what matters.
        let args = ["openclaw-node", "-hmm", files["-hmm"]!, "-dict", "/dev/null", "-logfn", "/dev/null",
            // End-of-speech after 0.25 s of non-speech instead of 0.5 s: push-to-talk's own silence
            // window comes on top, and the apps answer about 0.7 s after the speaker stops.
            "-vad_postspeech", "25"]
        var cargs = args.map { strdup($0) }
        defer { cargs.forEach { free($0) } }
        guard let config = cargs.withUnsafeMutableBufferPointer({ cps_config(Int32($0.count), $0.baseAddress) }) else {
            throw NodeError.unavailable("speech recognizer: pocketsphinx refused its configuration")
        }
        guard let decoder = ps_init(config) else {
            cmd_ln_free_r(config)
            throw NodeError.unavailable("speech recognizer: pocketsphinx could not load the acoustic model in \(modelDir)")
        }
        self.config = config
        self.decoder = decoder
        if prepareNow { try prepare() }
    }

    deinit {
        ps_free(decoder)
        cmd_ln_free_r(config)
    }

    public func prepare() throws(NodeError) {
        guard !isReady else { return }
        let files = Self.modelFiles(modelDir)
        try pausingSpotting { () throws(NodeError) in
            guard ps_load_dict(decoder, files["-dict"]!, nil, nil) >= 0 else {
                throw NodeError.unavailable("speech recognizer: cannot load the dictionary \(files["-dict"]!)")
            }
            guard ps_set_lm_file(decoder, Self.lmSearch, files["-lm"]!) >= 0 else {
                _ = ps_load_dict(decoder, "/dev/null", nil, nil)
                restoreWakeWords()
                throw NodeError.unavailable("speech recognizer: cannot load the language model \(files["-lm"]!)")
            }
            isReady = true
        }
    }

    public func release() {
        guard isReady, !(inUtterance && !spotting) else { return }
        try? pausingSpotting { () throws(NodeError) in
            _ = ps_unset_search(decoder, Self.lmSearch)
            _ = ps_load_dict(decoder, "/dev/null", nil, nil)
            isReady = false
            restoreWakeWords()
        }
        cps_return_free_memory()
    }

    /// Runs `body` (which swaps the dictionary or searches) outside any utterance, resuming
    /// wake-phrase spotting afterwards if it was running and still can.
    private func pausingSpotting(_ body: () throws(NodeError) -> Void) throws(NodeError) {
        let wasSpotting = inUtterance && spotting
        if inUtterance { ps_end_utt(decoder); inUtterance = false }
        defer {
            if wasSpotting, wakeFile != nil, ps_set_search(decoder, Self.wakeSearch) >= 0, ps_start_utt(decoder) >= 0 {
                inUtterance = true; spotting = true
            }
        }
        try body()
    }

    /// The small dictionary lost the wake words with the reload: add them back and rebuild the
    /// keyword search on them. If that fails the keyword search is dropped (it was built on the
    /// old dictionary) and spotting reports "no phrases" until the gateway sends them again.
    private func restoreWakeWords() {
        guard let file = wakeFile else { return }
        if !isReady { for w in wakeWords { _ = ps_add_word(decoder, w.word, w.phones, 0) } }
        if ps_set_kws(decoder, Self.wakeSearch, file) < 0 {
            _ = ps_unset_search(decoder, Self.wakeSearch)
            wakeFile = nil
        }
    }

    public func begin() throws(NodeError) {
        try prepare()
        if inUtterance { ps_end_utt(decoder) }
        inUtterance = false
        spotting = false
        guard ps_set_search(decoder, Self.lmSearch) >= 0 else { throw NodeError.unavailable("speech recognizer: cannot switch to recognition") }
        guard ps_start_utt(decoder) >= 0 else { throw NodeError.unavailable("speech recognizer: cannot start an utterance") }
        inUtterance = true
        wasInSpeech = false
        speechEndedWithoutWords = false
    }

    public func feed(_ samples: UnsafeBufferPointer<Int16>) throws(NodeError) {
        guard inUtterance, let base = samples.baseAddress, !samples.isEmpty else { return }
        guard ps_process_raw(decoder, base, samples.count, 0, 0) >= 0 else {
            throw NodeError.unavailable("speech recognizer: decoding failed")
        }
        // At the end of each stretch the detector called speech: were there words in it (so far)?
        let inSpeech = ps_get_in_speech(decoder) != 0
        if wasInSpeech && !inSpeech {
            var score: Int32 = 0
            let hyp = ps_get_hyp(decoder, &score)
            speechEndedWithoutWords = hyp == nil || hyp!.pointee == 0 || String(cString: hyp!).trimmed().isEmpty
        } else if inSpeech {
            speechEndedWithoutWords = false
        }
        wasInSpeech = inSpeech
    }

    public var hearsSpeech: Bool { inUtterance && ps_get_in_speech(decoder) != 0 }
    public private(set) var speechEndedWithoutWords = false
    private var wasInSpeech = false

    public func finish() throws(NodeError) -> String {
        guard inUtterance else { return "" }
        inUtterance = false
        guard ps_end_utt(decoder) >= 0 else { throw NodeError.unavailable("speech recognizer: cannot end the utterance") }
        var score: Int32 = 0
        guard let hyp = ps_get_hyp(decoder, &score) else { return "" }
        return String(cString: hyp).trimmed()
    }

    public func setWakePhrases(_ phrases: [String], file: String) throws(NodeError) {
        guard !phrases.isEmpty else { throw NodeError.invalidRequest("no wake phrases") }
        // One phrase per line with its detection threshold (1e-20: measured on Debian's recordings).
        let list = phrases.map { "\($0) /1e-20/" }.joined(separator: "\n") + "\n"
        do { try FileSystem.write(Array(list.utf8), to: file, mode: 0o600) } catch {
            throw NodeError.unavailable("cannot write the wake phrase list: \(error)")
        }
        let words = Set(phrases.flatMap { $0.split(separator: " ").map(String.init) })
        let found = WakePhrases.pronunciations(of: words, modelDir: modelDir)
        if inUtterance { ps_end_utt(decoder); inUtterance = false; spotting = false }
        wakeFile = file
        wakeWords = found
        if !isReady { for w in found { _ = ps_add_word(decoder, w.word, w.phones, 0) } }
        guard ps_set_kws(decoder, Self.wakeSearch, file) >= 0 else {
            wakeFile = nil
            throw NodeError.unavailable("voice wake: pocketsphinx refused the phrases \(phrases)")
        }
    }

    public func beginSpotting() throws(NodeError) {
        guard wakeFile != nil else { throw NodeError.unavailable("voice wake: no phrases to listen for") }
        if inUtterance { ps_end_utt(decoder) }
        inUtterance = false
        guard ps_set_search(decoder, Self.wakeSearch) >= 0, ps_start_utt(decoder) >= 0 else {
            throw NodeError.unavailable("voice wake: cannot start listening")
        }
        inUtterance = true
        spotting = true
    }

    public func spot(_ samples: UnsafeBufferPointer<Int16>) -> String? {
        guard inUtterance, let base = samples.baseAddress, !samples.isEmpty,
              ps_process_raw(decoder, base, samples.count, 0, 0) >= 0 else { return nil }
        var score: Int32 = 0
        guard let hyp = ps_get_hyp(decoder, &score), hyp.pointee != 0 else { return nil }
        let heard = String(cString: hyp).trimmed()
        ps_end_utt(decoder)
        ps_start_utt(decoder)
        return heard.isEmpty ? nil : heard
    }
}
