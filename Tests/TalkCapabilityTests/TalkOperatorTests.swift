import Foundation
@testable import Kit
@testable import Store
@testable import Support
@testable import TalkCapability
@testable import TestSupport
import Testing

/// Talk with an operator session, as the iOS and Android apps do it: the transcript goes out with
/// chat.send, the reply is followed by its runId among every session's chat events, and spoken in
/// the gateway's voice (talk.speak), with espeak-ng only where the gateway allows it. The test
/// gateway's talk.speak returns Debian's recorded human speech encoded as each format, so what
/// reaches the fake speaker can be checked by ear: the recognizer must hear the same words.
@Suite(.serialized) struct TalkOperatorTests {
    typealias Rig = TalkPTTTests.Rig

    /// goforward.raw as the gateway's voice would send it: `args` are ffmpeg output options.
    static func voiceFile(_ name: String, _ args: [String], in dir: String) throws -> String {
        _ = try TalkSpeechAudioTests.encoded(name, args, in: dir)
        return dir + "/" + name
    }

    /// What the fake speaker played, heard by the recognizer (the file is raw s16le at `rate`).
    static func heard(_ path: String, rate: Int) throws -> (seconds: Double, text: String) {
        let played = TalkPTTTests.played(path, sampleRate: rate)
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let samples = data.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        let text = try TalkRecognizerTests.decode(try PocketSphinxRecognizer(),
                                                  TalkSpeechAudioTests.to16k(SpeechAudio(samples: samples, sampleRate: rate))).text
        return (played.seconds, text)
    }

    /// One push-to-talk turn: the transcript must go out with chat.send (not voice.transcript), and
    /// the reply must be asked of talk.speak.
    static func turn(_ r: Rig) throws {
        try? FileManager.default.removeItem(atPath: r.spoken)
        let once = try #require(try r.call("talk.ptt.once")["payload"], "\(r.node.log.suffix(2000))")
        #expect(once["status"] == "queued" && once["transcript"] == "go forward ten meters", "\(once)")
        let sent = try #require(r.gw.waitFor("chat_send"), "\(r.node.log.suffix(2000))")
        #expect(sent["params"]?["message"] == "go forward ten meters" && sent["params"]?["idempotencyKey"] == once["captureId"], "\(sent)")
        #expect(sent["params"]?["sessionKey"] == "main", "the hello's main session: \(sent)")
        let speak = try #require(r.gw.waitFor("talk_speak"), "\(r.node.log.suffix(2000))")
        #expect(speak["params"] == ["text": "The robot will go forward ten meters.", "outputFormat": "pcm_24000"],
                "only the run chat.send started is spoken, not another session's: \(speak)")
    }

    @Test func chatSendAndTheGatewaysVoiceAfterOperatorApproval() throws {
        let r = try Rig(talk: "operator: true"); defer { r.stop() }
        // The device is paired as a node; as an operator it waits for approval, and says so.
        let asked = try #require(r.gw.waitFor("pairing_requested") { $0["role"] == "operator" }, "\(r.node.log.suffix(2000))")
        let requestId = try #require(asked["requestId"]?.stringValue)
        #expect(waitUntil(timeout: 10) { r.node.log.contains("openclaw devices approve \(requestId)") }, "\(r.node.log.suffix(2000))")
        let pending = try r.node.cli(["status"])
        #expect(pending.stdout.contains("Operator:     pending approval (request \(requestId))"), "\(pending.stdout)")
        // Meanwhile talk works on the node session: voice.transcript, espeak-ng.
        let early = try #require(try r.call("talk.ptt.once")["payload"])
        #expect(early["status"] == "queued" && r.gw.waitFor("node_event") { $0["name"] == "voice.transcript" } != nil, "\(early)")

        r.gw.command(["cmd": "approve", "requestId": .string(requestId)])
        let hello = try #require(r.gw.waitFor("hello", timeout: 20) { $0["role"] == "operator" }, "\(r.node.log.suffix(2000))")
        #expect(hello["issuedToken"] == true)
        #expect(waitUntil(timeout: 10) { (try? r.node.status())?["daemon"]?["operatorConnection"]?.stringValue?.hasPrefix("connected") == true })
        let dir = TestPaths.tempDir("voice"); defer { try? FileManager.default.removeItem(atPath: dir) }

        // PCM at 24 kHz as asked for; MP3 whatever the reply claims; Ogg/Opus, which plays at 48 kHz.
        let voices: [(file: String, ffmpeg: [String], reply: [String: JSONValue], logged: String, rate: Int)] = [
            ("voice.pcm", ["-f", "s16le", "-ar", "24000"], ["outputFormat": "pcm_24000"], "pcm_24000", 24_000),
            ("voice.mp3", ["-ar", "24000", "-c:a", "libmp3lame", "-b:a", "48k"], ["outputFormat": "mp3_44100_128", "mimeType": "audio/mpeg"],
             "mp3", 24_000),
            ("voice.ogg", ["-c:a", "libopus", "-b:a", "32k"], ["outputFormat": "opus_48000_32"], "ogg/opus", 48_000),
        ]
        for v in voices {
            let file = try Self.voiceFile(v.file, v.ffmpeg, in: dir)
            r.gw.command(.object(["cmd": "speak", "audioFile": .string(file)].merging(v.reply) { a, _ in a }))
            try Self.turn(r)
            #expect(waitUntil(timeout: 20) { r.node.log.contains("(gateway voice test, \(v.logged))") }, "\(r.node.log.suffix(1500))")
            let heard = try Self.heard(r.spoken, rate: v.rate)
            #expect(abs(heard.seconds - 2.79) < 0.3 && heard.text == "go forward ten meters", "\(v.file): \(heard)")
        }

        // The gateway has no voice but allows a local one: espeak-ng.
        r.gw.command(["cmd": "speak", "error": ["reason": "talk_unconfigured", "fallbackEligible": true]])
        try Self.turn(r)
        #expect(waitUntil(timeout: 20) { r.node.log.contains("characters, ") && r.node.log.contains("s (espeak-ng)") }, "\(r.node.log.suffix(1500))")
        let d = TalkPTTTests.played(r.spoken)
        #expect(d.seconds > 1 && d.rms > 300, "\(d)")

        // Its voice failed and it does not allow a local one: nothing is spoken, and the log says why.
        r.gw.command(["cmd": "speak", "error": ["reason": "synthesis_failed", "fallbackEligible": false]])
        try Self.turn(r)
        #expect(waitUntil(timeout: 20) { r.node.log.contains("refused (synthesis_failed) and does not allow a local voice") }, "\(r.node.log.suffix(1500))")
        #expect(!FileManager.default.fileExists(atPath: r.spoken))

        // A new push-to-talk while the gateway is still synthesizing: that reply is not played over it.
        let pcm = dir + "/voice.pcm"
        r.gw.command(["cmd": "speak", "audioFile": .string(pcm), "outputFormat": "pcm_24000", "delayMs": 2500])
        try Self.turn(r)
        let next = try #require(try r.call("talk.ptt.start")["payload"]?["captureId"], "\(r.node.log.suffix(1500))")
        #expect(waitUntil(timeout: 10) { r.node.log.contains("not speaking the agent's reply: a new push-to-talk began meanwhile") },
                "\(r.node.log.suffix(1500))")
        #expect(!FileManager.default.fileExists(atPath: r.spoken))
        #expect(try r.call("talk.ptt.cancel")["payload"]?["captureId"] == next)
        #expect(r.gw.schemaErrors.isEmpty, "\(r.gw.schemaErrors)")
    }

    /// A TLS gateway trusted on first use: the operator session never trusts a certificate by
    /// itself; it waits for the node session's pin and connects with it (a loopback gateway
    /// approves the operator role silently).
    @Test func theOperatorSessionFollowsTheNodesPin() throws {
        let cert = try TestCertificate(); defer { cert.remove() }
        let r = try Rig(gatewayArgs: ["--auto-approve", "--auto-approve-operator", "--cert", cert.certPath, "--key", cert.keyPath],
                        talk: "operator: true")
        defer { r.stop() }
        let op = try #require(r.gw.waitFor("hello", timeout: 30) { $0["role"] == "operator" }, "\(r.node.log.suffix(2000))")
        #expect(op["issuedToken"] == true)
        let log = r.node.log
        #expect(log.components(separatedBy: "trusting 127.0.0.1 on first use").count == 2, "one first-use trust, the node's: \(log.suffix(2000))")
        let pin = try r.node.status()?["gateways"]?.arrayValue?.first?["tlsPin"]?.stringValue
        #expect(pin == r.gw.fingerprint, "\(String(describing: pin))")
        try Self.turn(r)
    }

    /// A setup code whose bootstrap hands over an operator token: the operator session starts with
    /// it, no approval and no `operator: true` needed.
    @Test func aSetupCodesOperatorTokenIsUsed() throws {
        let r = try Rig(gatewayArgs: ["--bootstrap", "boot-talk", "--bootstrap-operator"], gateway: { url in
            let code = Encoding.base64url(Array(#"{"url":"\#(url)","bootstrapToken":"boot-talk"}"#.utf8))
            return "setupCode: '\(code)'"
        })
        defer { r.stop() }
        let op = try #require(r.gw.waitFor("hello", timeout: 20) { $0["role"] == "operator" }, "\(r.node.log.suffix(2000))")
        #expect(op["auth"] == ["deviceToken"], "the handed-over token, not a new approval: \(op)")
        let log = r.node.log
        #expect(log.contains("kept the operator token the setup code handed over"), "\(log.suffix(1500))")
        #expect(r.gw.all("pairing_requested").isEmpty)
        try Self.turn(r)
        #expect(r.gw.all("node_event").filter { $0["name"] == "voice.transcript" }.isEmpty, "chat.send instead of voice.transcript")
        // The gateway has no voice configured (the default answer): espeak-ng speaks it.
        #expect(waitUntil(timeout: 20) { r.node.log.contains("s (espeak-ng)") }, "\(r.node.log.suffix(1500))")
        #expect(r.gw.schemaErrors.isEmpty, "\(r.gw.schemaErrors)")
    }
}
