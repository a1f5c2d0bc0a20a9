import CPocketSphinx
import FoundationEssentials
import Glibc
import Kit

/// The offline English recognizer: Debian's pocketsphinx with its packaged en-US model, loaded once
/// (about a second) and kept warm. Used by one utterance at a time; the decoder and its config
/// are owned here and freed in deinit.
public final class PocketSphinxRecognizer: SpeechRecognizer, @unchecked Sendable {
    public static let defaultModelDir = "/usr/share/pocketsphinx/model/en-us"
    public let name = "pocketsphinx en-us"
    private let config: OpaquePointer
    private let decoder: OpaquePointer
    private var inUtterance = false
    /// The language-model search pocketsphinx set up from the model (recognition).
    private let lmSearch: String
    private static let wakeSearch = "wake"
    private var hasWakeSearch = false

    static func modelFiles(_ modelDir: String) -> [String: String] {
        ["-hmm": modelDir + "/en-us", "-lm": modelDir + "/en-us.lm.bin", "-dict": modelDir + "/cmudict-en-us.dict"]
    }

    /// The first model file that is not there (nil: all are): a cheap check, without loading.
    public static func missingModelFile(_ modelDir: String) -> String? {
        modelFiles(modelDir).values.sorted().first { !FileManager.default.fileExists(atPath: $0) }
    }

    /// Loads the model; UNAVAILABLE with the package to install when it is not there.
    public init(modelDir: String = PocketSphinxRecognizer.defaultModelDir) throws(NodeError) {
        let files = Self.modelFiles(modelDir)
        if let path = Self.missingModelFile(modelDir) {
            throw NodeError.unavailable("speech recognizer model not found (\(path)); install it: sudo apt install pocketsphinx-en-us")
        }
        // The decoder's own log is a firehose of model details on stderr; the node logs what matters.
        let args = ["openclaw-node"] + files.sorted { $0.key < $1.key }.flatMap { [$0.key, $0.value] } + ["-logfn", "/dev/null",
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
            throw NodeError.unavailable("speech recognizer: pocketsphinx could not load the model in \(modelDir)")
        }
        self.config = config
        self.decoder = decoder
        lmSearch = ps_get_search(decoder).map { String(cString: $0) } ?? "_default"
    }

    deinit {
        ps_free(decoder)
        cmd_ln_free_r(config)
    }

    public func begin() throws(NodeError) {
        if inUtterance { ps_end_utt(decoder) }
        inUtterance = false
        guard ps_set_search(decoder, lmSearch) >= 0 else { throw NodeError.unavailable("speech recognizer: cannot switch to recognition") }
        guard ps_start_utt(decoder) >= 0 else { throw NodeError.unavailable("speech recognizer: cannot start an utterance") }
        inUtterance = true
    }

    public func feed(_ samples: UnsafeBufferPointer<Int16>) throws(NodeError) {
        guard inUtterance, let base = samples.baseAddress, !samples.isEmpty else { return }
        guard ps_process_raw(decoder, base, samples.count, 0, 0) >= 0 else {
            throw NodeError.unavailable("speech recognizer: decoding failed")
        }
    }

    public var hearsSpeech: Bool { inUtterance && ps_get_in_speech(decoder) != 0 }

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
        guard FileManager.default.createFile(atPath: file, contents: Data(list.utf8), attributes: [.posixPermissions: 0o600]) else {
            throw NodeError.unavailable("cannot write the wake phrase list \(file)")
        }
        if inUtterance { ps_end_utt(decoder); inUtterance = false }
        guard ps_set_kws(decoder, Self.wakeSearch, file) >= 0 else {
            throw NodeError.unavailable("voice wake: pocketsphinx refused the phrases \(phrases)")
        }
        hasWakeSearch = true
    }

    public func beginSpotting() throws(NodeError) {
        guard hasWakeSearch else { throw NodeError.unavailable("voice wake: no phrases to listen for") }
        if inUtterance { ps_end_utt(decoder) }
        inUtterance = false
        guard ps_set_search(decoder, Self.wakeSearch) >= 0, ps_start_utt(decoder) >= 0 else {
            throw NodeError.unavailable("voice wake: cannot start listening")
        }
        inUtterance = true
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
