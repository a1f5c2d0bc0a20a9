import CEspeak
import Glibc
import Kit
import Support

/// Text to speech on the device with espeak-ng (the fallback voice when the gateway's talk.speak
/// is out of reach, as on a node-only connection). espeak-ng keeps global state and is not
/// reentrant, so one synthesis runs at a time, process-wide.
enum EspeakVoice {
    /// The library's one piece of state here: its sample rate, 0 until espeak_Initialize ran. The
    /// lock around it is what keeps every espeak-ng call to one thread at a time.
    private static let engine = Locked<Int32>(0)

    /// One synthesis's samples, reached by the callback through espeak's user_data.
    private final class Collected { var samples: [Int16] = [] }

    /// espeak-ng hands synthesized audio to this callback in pieces (synchronous mode), on the
    /// thread that called espeak_Synth (which holds `engine`).
    private static let collect: @convention(c) (UnsafeMutablePointer<Int16>?, Int32, UnsafeMutablePointer<espeak_EVENT>?) -> Int32 = { wav, n, events in
        if let wav, n > 0, let box = events?.pointee.user_data {
            Unmanaged<Collected>.fromOpaque(box).takeUnretainedValue().samples.append(contentsOf: UnsafeBufferPointer(start: wav, count: Int(n)))
        }
        return 0
    }

    /// espeak-ng's own speaking rate (words per minute), restored after a call that set another.
    static let normalRate: Int32 = 175

    /// Mono 16-bit samples of `text` spoken by `voice` ("en", "de", …), and their sample rate.
    /// `rate`: words per minute (80…450), nil for espeak-ng's normal 175.
    static func synthesize(_ text: String, voice: String, rate: Int? = nil) throws(NodeError) -> SpeechAudio {
        try engine.withLock { (sampleRate: inout Int32) throws(NodeError) -> SpeechAudio in
            if sampleRate <= 0 {
                sampleRate = espeak_Initialize(AUDIO_OUTPUT_SYNCHRONOUS, 200, nil, 0)
                guard sampleRate > 0 else {
                    throw NodeError.unavailable("espeak-ng could not start (is espeak-ng-data installed? sudo apt install espeak-ng-data)")
                }
                espeak_SetSynthCallback(collect)
            }
            guard espeak_SetVoiceByName(voice) == EE_OK else {
                throw NodeError.unavailable("espeak-ng has no voice \"\(voice)\" (espeak-ng --voices lists them); set capabilities.talk.voice")
            }
            // The rate is espeak's global state: set for this call, back to normal after it.
            espeak_SetParameter(espeakRATE, Int32(rate ?? Int(normalRate)), 0)
            defer { if rate != nil { espeak_SetParameter(espeakRATE, normalRate, 0) } }
            let collected = Collected()
            let bytes = Array(text.utf8CString)
            let rc = withExtendedLifetime(collected) {
                bytes.withUnsafeBufferPointer {
                    espeak_Synth($0.baseAddress, $0.count, 0, POS_CHARACTER, 0, UInt32(espeakCHARS_UTF8), nil,
                                 Unmanaged.passUnretained(collected).toOpaque())
                }
            }
            guard rc == EE_OK else { throw NodeError.unavailable("espeak-ng could not speak the text (error \(rc.rawValue))") }
            return SpeechAudio(samples: collected.samples, sampleRate: Int(sampleRate))
        }
    }
}
