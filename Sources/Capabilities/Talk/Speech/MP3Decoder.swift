import CMPG123

/// MP3 (what `mp3_*` output formats and many providers' defaults are) to mono samples.
enum MP3Decoder {
    /// Why MP3 replies cannot be played here (libmpg123 missing), for doctor; nil when they can.
    static var libraryProblem: String? {
        if case .failure(let f) = MPG123Library.shared { return f.description }
        return nil
    }

    static func decode(_ data: [UInt8]) throws(SpeechAudioError) -> SpeechAudio {
        let mpg: MPG123Library
        switch MPG123Library.shared {
        case .success(let lib): mpg = lib
        case .failure(let f): throw SpeechAudioError(description: "cannot play MP3 speech: \(f.description)")
        }
        var err: Int32 = 0
        guard let mh = mpg.new(nil, &err) else { throw SpeechAudioError(description: "libmpg123: \(mpg.describe(err))") }
        defer { mpg.delete(mh) }
        // Errors are reported here, not printed by the library to the daemon's stderr.
        _ = mpg.param(mh, MPG123_ADD_FLAGS, Int(MPG123_QUIET.rawValue), 0)
        // Signed 16-bit at whatever rate and channel count the stream has.
        _ = mpg.formatNone(mh)
        var list: UnsafePointer<Int>?
        var count = 0
        mpg.rates(&list, &count)
        for i in 0..<count { _ = mpg.format(mh, list![i], Int32(MPG123_MONO.rawValue | MPG123_STEREO.rawValue), Int32(MPG123_ENC_SIGNED_16.rawValue)) }
        guard mpg.openFeed(mh) == MPG123_OK.rawValue else { throw SpeechAudioError(description: "libmpg123 cannot open a feed") }
        let fed = data.withUnsafeBufferPointer { mpg.feed(mh, $0.baseAddress, $0.count) }
        guard fed == MPG123_OK.rawValue else { throw SpeechAudioError(description: "libmpg123: \(mpg.describe(fed))") }

        var interleaved: [Int16] = []
        var rate = 0, channels: Int32 = 0, encoding: Int32 = 0
        var buffer = [Int16](repeating: 0, count: 16_384)
        while true {
            var done = 0
            let rc = buffer.withUnsafeMutableBytes { mpg.read(mh, $0.baseAddress, $0.count, &done) }
            interleaved.append(contentsOf: buffer[0..<(done / 2)])
            if rc == MPG123_NEW_FORMAT.rawValue {
                _ = mpg.getformat(mh, &rate, &channels, &encoding)
            } else if rc == MPG123_NEED_MORE.rawValue || rc == MPG123_DONE.rawValue {
                break  // all of the reply is fed: the end of the stream
            } else if rc != MPG123_OK.rawValue {
                throw SpeechAudioError(description: "MP3 speech does not decode: \(mpg.describe(rc))")
            }
        }
        guard rate > 0, channels > 0, !interleaved.isEmpty else { throw SpeechAudioError(description: "MP3 speech holds no audio frames") }
        return SpeechAudio(samples: SpeechAudio.mono(interleaved, channels: Int(channels)), sampleRate: rate)
    }
}
