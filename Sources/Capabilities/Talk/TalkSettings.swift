import Config
import Kit

/// `capabilities.talk.*`.
struct TalkSettings: Sendable {
    /// The ALSA PCM to capture from (16 kHz mono S16_LE is requested; "plug" PCMs convert).
    var captureDevice = "default"
    /// pocketsphinx model directory (Debian's pocketsphinx-en-us).
    var modelDir = PocketSphinxRecognizer.defaultModelDir
    /// Where replies are spoken (ALSA).
    var playbackDevice = "default"
    /// espeak-ng voice for replies spoken on the device.
    var voice = "en"
    /// capabilities.talk.voiceWake.enabled: listen for the gateway's trigger phrases.
    var voiceWake = false
    /// capabilities.talk.operator: ask the gateway for an operator session (chat.send, talk.speak).
    var operatorSession = false
    /// capabilities.talk.releaseModelAfter (seconds): give the language model back after this long
    /// without push-to-talk; nil keeps it loaded.
    var releaseModelAfter: Duration? = .seconds(600)
    /// capabilities.talk.mode: conversations (talk.start, voice wake).
    var conversation = ConversationSettings()
    /// Where the bundle's library is (libopenclaw-aec.so is installed beside it).
    var libraryDirectory: String?

    init() {}

    init(_ section: BundleSection) {
        captureDevice = section.string("captureDevice") ?? "default"
        modelDir = section.string("model") ?? PocketSphinxRecognizer.defaultModelDir
        playbackDevice = section.string("playbackDevice") ?? "default"
        voice = section.string("voice") ?? "en"
        voiceWake = section.settings["voiceWake"]?["enabled"]?.boolValue ?? false
        operatorSession = section.bool("operator") ?? false
        let release = section.settings["releaseModelAfter"]?.intValue ?? 600
        releaseModelAfter = release > 0 ? .seconds(release) : nil
        conversation = ConversationSettings(section)
    }
}

/// talk's own error codes, as the iOS and Android nodes name them (docs/PROTOCOL.md §6.6).
enum TalkError {
    static let micBusy = NodeError.Code.micBusy
    static let pttBusy: NodeError.Code = "PTT_BUSY"
}
