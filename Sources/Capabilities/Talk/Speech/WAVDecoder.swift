/// RIFF/WAVE with 16-bit integer PCM (what providers return as "wav"), any rate, any channel count.
enum WAVDecoder {
    static func decode(_ data: [UInt8]) throws(SpeechAudioError) -> SpeechAudio {
        func u16(_ at: Int) -> Int { Int(data[at]) | Int(data[at + 1]) << 8 }
        func u32(_ at: Int) -> Int { u16(at) | u16(at + 2) << 16 }
        var at = 12
        var format: (tag: Int, channels: Int, rate: Int, bits: Int)?
        while at + 8 <= data.count {
            let id = String(decoding: data[at..<(at + 4)], as: UTF8.self), size = u32(at + 4)
            let body = at + 8
            if id == "fmt ", size >= 16, body + 16 <= data.count {
                format = (u16(body), u16(body + 2), u32(body + 4), u16(body + 14))
            } else if id == "data" {
                guard let f = format else { break }
                // 1 = PCM; 0xFFFE = WAVE_FORMAT_EXTENSIBLE, whose sub-format is PCM for 16-bit speech.
                guard f.tag == 1 || f.tag == 0xFFFE, f.bits == 16, f.channels >= 1, (8_000...192_000).contains(f.rate) else {
                    throw SpeechAudioError(description: "WAV speech is not 16-bit PCM (format \(f.tag), \(f.bits) bits, \(f.channels) channels, \(f.rate) Hz)")
                }
                let end = min(data.count, body + size)  // a streamed WAV may give size 0xFFFFFFFF
                var interleaved = [Int16](repeating: 0, count: (end - body) / 2)
                for i in interleaved.indices { interleaved[i] = Int16(bitPattern: UInt16(u16(body + 2 * i))) }
                return SpeechAudio(samples: SpeechAudio.mono(interleaved, channels: f.channels), sampleRate: f.rate)
            }
            at = body + size + (size & 1)  // chunks are padded to even sizes
        }
        throw SpeechAudioError(description: "WAV speech has no fmt/data chunk")
    }
}
