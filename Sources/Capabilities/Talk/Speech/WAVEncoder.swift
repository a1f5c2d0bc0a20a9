/// Speech as a WAV file (PCM, mono, 16-bit): what tts.speak returns with `output: "audio"`, the
/// form every player and every speech API takes.
enum WAVEncoder {
    static func encode(_ audio: SpeechAudio) -> [UInt8] {
        let dataBytes = audio.samples.count * 2
        var out: [UInt8] = []
        out.reserveCapacity(44 + dataBytes)
        func u32(_ v: Int) { for i in 0..<4 { out.append(UInt8(truncatingIfNeeded: v >> (8 * i))) } }
        func u16(_ v: Int) { for i in 0..<2 { out.append(UInt8(truncatingIfNeeded: v >> (8 * i))) } }
        out += Array("RIFF".utf8); u32(36 + dataBytes); out += Array("WAVE".utf8)
        out += Array("fmt ".utf8); u32(16); u16(1); u16(1); u32(audio.sampleRate); u32(audio.sampleRate * 2); u16(2); u16(16)
        out += Array("data".utf8); u32(dataBytes)
        for s in audio.samples { u16(Int(UInt16(bitPattern: s))) }
        return out
    }
}
