
/// The container of the audio `talk.speak` returned. The gateway asks its provider for
/// `pcm_24000`, but providers may ignore the hint, so the bytes decide where they can: a WAV, MP3
/// or Ogg file is recognised by its first bytes whatever the reply's `outputFormat`, `mimeType` or
/// `fileExtension` claim. Headerless PCM has no signature and is taken only when the reply says
/// `pcm_<rate>`.
enum SpeechFormat: Equatable, Sendable {
    case pcm(sampleRate: Int)
    case wav
    case mp3
    case oggOpus
    case unsupported(String)

    /// How the log names it.
    var name: String {
        switch self {
        case .pcm(let rate): return "pcm_\(rate)"
        case .wav: return "wav"
        case .mp3: return "mp3"
        case .oggOpus: return "ogg/opus"
        case .unsupported(let n): return n
        }
    }

    static func detect(_ data: [UInt8], outputFormat: String?, mimeType: String?, fileExtension: String?) -> SpeechFormat {
        if data.starts(with: Array("RIFF".utf8)), data.count >= 12, Array(data[8..<12]) == Array("WAVE".utf8) { return .wav }
        if data.starts(with: Array("OggS".utf8)) { return .oggOpus }
        if data.starts(with: Array("ID3".utf8)) || MPEGAudioFrames.startsWithFrames(data) { return .mp3 }
        let hint = (outputFormat ?? "").lowercased()
        if hint.hasPrefix("pcm_"), let rate = Int(hint.dropFirst(4)), (8_000...192_000).contains(rate) { return .pcm(sampleRate: rate) }
        if hint.hasPrefix("mp3") || mimeType == "audio/mpeg" || fileExtension?.lowercased().hasSuffix("mp3") == true { return .mp3 }
        let named = [hint, mimeType ?? "", fileExtension ?? ""].first { !$0.isEmpty } ?? "unknown"
        return .unsupported(named)
    }

    /// Decodes `data` to mono samples (MP3 with libmpg123, Ogg/Opus with libopusfile, both loaded
    /// on first use).
    static func decode(_ data: [UInt8], as format: SpeechFormat) throws(SpeechAudioError) -> SpeechAudio {
        switch format {
        case .pcm(let rate):
            let samples = data.withUnsafeBytes { raw in
                (0..<(data.count / 2)).map { Int16(littleEndian: raw.loadUnaligned(fromByteOffset: $0 * 2, as: Int16.self)) }
            }
            return SpeechAudio(samples: samples, sampleRate: rate)
        case .wav: return try WAVDecoder.decode(data)
        case .mp3: return try MP3Decoder.decode(data)
        case .oggOpus: return try OggOpusDecoder.decode(data)
        case .unsupported(let name):
            throw SpeechAudioError(description: "speech audio in an unsupported format (\(name)); the node plays pcm_*, WAV, MP3 and Ogg/Opus")
        }
    }
}
