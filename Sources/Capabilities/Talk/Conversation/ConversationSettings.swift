import Config

/// `capabilities.talk.mode`: how the node holds a spoken conversation (talk.start, voice
/// wake), read once per start of the capability.
struct ConversationSettings: Sendable, Equatable {
    /// realtime: the gateway's relay (talk.session.*); loop: the offline recognizer, chat.send (or
    /// voice.transcript) and a spoken reply, turn after turn; auto: realtime when the gateway's
    /// talk.catalog says it is ready there, else the loop.
    enum Kind: String, Sendable { case auto, realtime, loop }
    var kind: Kind = .auto
    /// Sent to talk.session.create only when set (every key is optional there, and older gateways
    /// refuse `language`).
    var provider = "", model = "", voice = "", language = ""
    /// half: no microphone audio goes up while a reply plays (and `echoTail` after); full: it
    /// does, for a capture device that cancels echo itself (PipeWire's echo-cancel source, a
    /// speakerphone that does it in hardware).
    var fullDuplex = false
    /// In full duplex, whether the node removes the reply's echo itself (WebRTC's canceller,
    /// libopenclaw-aec.so) rather than trusting the capture device to.
    var nodeEchoCanceller = true
    /// Speech over the reply stops it (talk.session.cancelOutput, reason barge-in).
    var bargeIn = true
    /// The microphone level (RMS, fraction of full scale) that counts as speaking over the reply.
    var bargeInLevel = 0.08
    /// A conversation ends after this long with nobody speaking and nothing playing.
    var endAfterSilence: Duration = .seconds(30)
    /// Said alone (the gateway's transcript of the person), these end the conversation.
    var stopPhrases = ["stop talking", "goodbye", "stop the conversation"]
    /// Voice wake starts a conversation instead of sending the words after the phrase.
    var startOnWake = false
    /// How long the uplink stays closed after the reply's last sample (the room's echo dying away).
    var echoTail: Duration = .milliseconds(250)

    init() {}

    init(_ section: BundleSection) {
        let c = section.settings["mode"]
        kind = c?["conversation"]?.stringValue.flatMap(Kind.init(rawValue:)) ?? .auto
        provider = c?["provider"]?.stringValue ?? ""
        model = c?["model"]?.stringValue ?? ""
        voice = c?["voice"]?.stringValue ?? ""
        language = c?["language"]?.stringValue ?? ""
        fullDuplex = c?["duplex"]?.stringValue == "full"
        nodeEchoCanceller = c?["echoCanceller"]?.stringValue != "device"
        bargeIn = c?["bargeIn"]?.boolValue ?? true
        bargeInLevel = Double(c?["bargeInLevel"]?.intValue ?? 8) / 100
        endAfterSilence = .seconds(c?["endAfterSilence"]?.intValue ?? 30)
        if let phrases = c?["stopPhrases"]?.arrayValue?.compactMap(\.stringValue) { stopPhrases = phrases }
        startOnWake = c?["startOnWake"]?.boolValue ?? false
    }

    /// Whether `transcript` (the person's whole turn) is one of the stop phrases.
    func isStopPhrase(_ transcript: String) -> Bool {
        let said = Self.normalized(transcript)
        return !said.isEmpty && stopPhrases.contains { Self.normalized($0) == said }
    }

    private static func normalized(_ s: String) -> String {
        s.lowercased().split { !$0.isLetter && !$0.isNumber }.joined(separator: " ")
    }
}
