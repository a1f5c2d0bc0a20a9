import Support

/// Ogg/Opus (what `opus_*` output formats return) to mono samples with libopusfile, bound with
/// dlopen the first time the gateway sends Opus, like libmpg123. The prototypes are opusfile.h's
/// (0.12); its header is not imported because it includes <opus_multistream.h> by a path that only
/// pkg-config's flags resolve, and those would link the library into the bundle.
enum OggOpusDecoder {
    private struct Library: Sendable {
        let openMemory: @convention(c) (UnsafePointer<UInt8>?, Int, UnsafeMutablePointer<Int32>?) -> OpaquePointer?
        let read: @convention(c) (OpaquePointer?, UnsafeMutablePointer<Int16>?, Int32, UnsafeMutablePointer<Int32>?) -> Int32
        let channelCount: @convention(c) (OpaquePointer?, Int32) -> Int32
        let free: @convention(c) (OpaquePointer?) -> Void

        static let shared: Result<Library, DynamicLibrary.Failure> = Result { () throws(DynamicLibrary.Failure) in
            let lib = try DynamicLibrary("libopusfile.so.0", package: "libopusfile0")
            return Library(openMemory: try lib.function("op_open_memory"), read: try lib.function("op_read"),
                           channelCount: try lib.function("op_channel_count"), free: try lib.function("op_free"))
        }
    }

    /// Why Ogg/Opus replies cannot be played here (libopusfile missing), for doctor; nil when they can.
    static var libraryProblem: String? {
        if case .failure(let f) = Library.shared { return f.description }
        return nil
    }

    /// Opus always decodes at 48 kHz, whatever rate the encoder was fed.
    static let sampleRate = 48_000

    static func decode(_ data: [UInt8]) throws(SpeechAudioError) -> SpeechAudio {
        let op: Library
        switch Library.shared {
        case .success(let lib): op = lib
        case .failure(let f): throw SpeechAudioError(description: "cannot play Opus speech: \(f.description)")
        }
        // op_open_memory reads `data` in place: it must outlive the decoder, so the decoder lives in
        // the buffer's scope. The closure returns its failure as a value: Swift 6.0 (Debian 13's swiftlang) does not carry
        // a typed throw through withUnsafeBufferPointer.
        return try data.withUnsafeBufferPointer { bytes in
            Result { () throws(SpeechAudioError) -> SpeechAudio in try decode(bytes, op) }
        }.get()
    }

    /// Decodes the whole stream in `bytes`, which op_open_memory reads in place.
    private static func decode(_ bytes: UnsafeBufferPointer<UInt8>, _ op: Library) throws(SpeechAudioError) -> SpeechAudio {
        var err: Int32 = 0
        guard let of = op.openMemory(bytes.baseAddress, bytes.count, &err) else {
            throw SpeechAudioError(description: "speech is not Ogg/Opus audio (\(describe(err)))")
        }
        defer { op.free(of) }
        var out: [Int16] = []
        var buffer = [Int16](repeating: 0, count: 11_520)  // 120 ms of 48 kHz stereo, the largest Opus packet
        while true {
            var link: Int32 = 0
            let frames = buffer.withUnsafeMutableBufferPointer { op.read(of, $0.baseAddress, Int32($0.count), &link) }
            if frames == 0 { break }
            if frames == -3 { continue }  // OP_HOLE: a gap in the stream; decoding goes on after it
            guard frames > 0 else { throw SpeechAudioError(description: "Opus speech does not decode (\(describe(frames)))") }
            let channels = Int(max(1, op.channelCount(of, link)))
            out += SpeechAudio.mono(Array(buffer[0..<(Int(frames) * channels)]), channels: channels)
        }
        guard !out.isEmpty else { throw SpeechAudioError(description: "Opus speech holds no audio") }
        return SpeechAudio(samples: out, sampleRate: sampleRate)
    }

    /// opusfile.h's negative return codes, named as its documentation names them.
    private static func describe(_ rc: Int32) -> String {
        switch rc {
        case -128: return "read error"
        case -132: return "not an Ogg Opus stream"
        case -133: return "bad Opus header"
        case -134: return "unsupported Opus version"
        case -135: return "not audio"
        case -136, -137: return "corrupt stream"
        default: return "error \(rc)"
        }
    }
}
