/// Recognises MP3 without an ID3 tag: the bytes begin with an MPEG audio frame header whose
/// length, computed from its fields, lands exactly on a second valid header. Two chained headers
/// are what decoders themselves look for; a second of speech as 16-bit PCM practically never
/// contains them by chance, so bare MP3 labelled `pcm_*` is still played as MP3.
enum MPEGAudioFrames {
    struct Header {
        let length: Int
    }

    /// The frame header at `at`, if one is there (MPEG-1/2/2.5, layers I–III).
    static func header(_ d: [UInt8], at: Int) -> Header? {
        guard at + 4 <= d.count, d[at] == 0xFF, d[at + 1] & 0xE0 == 0xE0 else { return nil }
        let version = Int(d[at + 1] >> 3) & 3        // 0: 2.5, 2: 2, 3: 1 (1 is reserved)
        let layer = Int(d[at + 1] >> 1) & 3          // 1: III, 2: II, 3: I (0 is reserved)
        let bitrateIndex = Int(d[at + 2] >> 4), rateIndex = Int(d[at + 2] >> 2) & 3, padding = Int(d[at + 2] >> 1) & 1
        guard version != 1, layer != 0, bitrateIndex != 0, bitrateIndex != 15, rateIndex != 3 else { return nil }
        let v1 = version == 3
        let kbps: [Int]
        switch (v1, layer) {
        case (true, 3): kbps = [0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448]
        case (true, 2): kbps = [0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384]
        case (true, _): kbps = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320]
        case (false, 3): kbps = [0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256]
        default: kbps = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160]
        }
        let rate = [44_100, 48_000, 32_000][rateIndex] >> (version == 3 ? 0 : version == 2 ? 1 : 2)
        let bitrate = kbps[bitrateIndex] * 1000
        let length: Int
        if layer == 3 { length = (12 * bitrate / rate + padding) * 4 }
        else { length = (layer == 1 && !v1 ? 72 : 144) * bitrate / rate + padding }
        return length >= 4 ? Header(length: length) : nil
    }

    static func startsWithFrames(_ d: [UInt8]) -> Bool {
        guard let first = header(d, at: 0), header(d, at: first.length) != nil else { return false }
        // The same stream: version, layer and sample rate do not change between frames.
        let next = first.length
        return d[1] & 0xFE == d[next + 1] & 0xFE && d[2] & 0x0C == d[next + 2] & 0x0C
    }
}
