
/// Speech ready for the speaker: mono signed 16-bit samples at `sampleRate`.
struct SpeechAudio: Sendable {
    var samples: [Int16]
    var sampleRate: Int

    var seconds: Double { sampleRate > 0 ? Double(samples.count) / Double(sampleRate) : 0 }

    /// Interleaved frames of `channels` averaged to mono (speech is mono; a stereo file would
    /// otherwise play at half speed on a mono device).
    static func mono(_ interleaved: [Int16], channels: Int) -> [Int16] {
        guard channels > 1 else { return interleaved }
        var out = [Int16](repeating: 0, count: interleaved.count / channels)
        interleaved.withUnsafeBufferPointer { src in
            for i in out.indices {
                var sum = 0
                for c in 0..<channels { sum += Int(src[i * channels + c]) }
                out[i] = Int16(sum / channels)
            }
        }
        return out
    }
}

/// Why speech audio could not be turned into samples: the message names the format and what to
/// install when a decoder library is missing.
struct SpeechAudioError: Error, Sendable, CustomStringConvertible {
    let description: String
}
