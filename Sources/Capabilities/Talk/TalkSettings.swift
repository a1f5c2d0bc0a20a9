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

    init() {}

    init(_ section: NodeConfig.CapabilitySection) {
        captureDevice = section.string("captureDevice") ?? "default"
        modelDir = section.string("model") ?? PocketSphinxRecognizer.defaultModelDir
        playbackDevice = section.string("playbackDevice") ?? "default"
        voice = section.string("voice") ?? "en"
        voiceWake = section.settings["voiceWake"]?["enabled"]?.boolValue ?? false
        operatorSession = section.bool("operator") ?? false
        let release = section.settings["releaseModelAfter"]?.intValue ?? 600
        releaseModelAfter = release > 0 ? .seconds(release) : nil
    }

    static let configFields: [ConfigField] = [
        ConfigField("captureDevice", .string, default: "\"default\"", "the ALSA device to record push-to-talk from (arecord -L lists them)"),
        ConfigField("model", .string, default: "\"\(PocketSphinxRecognizer.defaultModelDir)\"",
                    "the pocketsphinx model directory (Debian: pocketsphinx-en-us)"),
        ConfigField("playbackDevice", .string, default: "\"default\"", "the ALSA device replies are spoken on (aplay -L lists them)"),
        ConfigField("voice", .string, default: "\"en\"", "the espeak-ng voice for replies spoken on the device (espeak-ng --voices)"),
        ConfigField("operator", .bool, default: "false",
                    "also connect as an operator (same device key) so transcripts go out with chat.send and replies are spoken in " +
                    "the gateway's voice (talk.speak); the first time, approve it on the gateway: openclaw devices approve <requestId>. " +
                    "Without it an operator token from a setup code is still used when the node holds one"),
        ConfigField("releaseModelAfter", .integer(0...86_400), default: "600",
                    "seconds without push-to-talk after which the speech recognizer's language model (about 90 MB) is given back; " +
                    "the next capture loads it again while it records (about half a second on a PC). 0 keeps it loaded"),
        ConfigField("voiceWake", .object([
            ConfigField("enabled", .bool, default: "false",
                        "listen for the gateway's wake phrases while someone is at the device (English phrases only)"),
        ]), "voice wake"),
    ]
}

/// talk's own error codes, as the iOS and Android nodes name them (docs/PROTOCOL.md §6.6).
enum TalkError {
    static let micBusy: NodeError.Code = "MIC_BUSY"
    static let pttBusy: NodeError.Code = "PTT_BUSY"
}
