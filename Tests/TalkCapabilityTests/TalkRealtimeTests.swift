import Foundation
@testable import Kit
@testable import Store
@testable import Support
@testable import TalkCapability
@testable import TestSupport
import Testing

/// Realtime talk through the test gateway's relay (Tests/gateway/talk_relay.py), which plays the
/// relay honestly: it decodes what the node streams up with pocketsphinx, answers with a known
/// reply in 960-byte chunks sent in a burst, and reports every call. The fake microphone plays
/// real recordings (Debian's pocketsphinx-testdata) at 48 kHz, which the node resamples to the
/// relay's 24 kHz; the fake speaker is an ALSA file PCM whose bytes are compared with the reply.
@Suite(.serialized) struct TalkRealtimeTests {
    typealias Rig = TalkPTTTests.Rig
    static let data = TalkRealSpeechTests.data

    /// Real recordings and silences as one 48 kHz S16_LE file (ffmpeg resamples each part).
    static func microphone(_ parts: [(file: String?, seconds: Double)], in dir: String) throws -> String {
        var out = Data()
        for (i, part) in parts.enumerated() {
            guard let file = part.file else { out.append(Data(count: Int(part.seconds * 48_000) * 2)); continue }
            let raw = dir + "/part\(i).raw"
            let input = file.hasSuffix(".raw") ? ["-f", "s16le", "-ar", "16000", "-ac", "1", "-i", data + "/" + file] : ["-i", data + "/" + file]
            let r = try runProcess("/usr/bin/ffmpeg", ["-hide_banner", "-loglevel", "error"] + input + ["-ar", "48000", "-ac", "1", "-f", "s16le", "-y", raw])
            try #require(r.code == 0, "ffmpeg: \(r.stderr)")
            out.append(try Data(contentsOf: URL(fileURLWithPath: raw)))
        }
        let path = dir + "/mic48k.raw"
        try out.write(to: URL(fileURLWithPath: path))
        return path
    }

    /// A recording as the relay's reply: PCM16 mono 24 kHz.
    static func reply(_ file: String, in dir: String) throws -> (path: String, bytes: Data) {
        let path = dir + "/reply24k.raw"
        let r = try runProcess("/usr/bin/ffmpeg", ["-hide_banner", "-loglevel", "error", "-i", data + "/" + file,
                                                   "-ar", "24000", "-ac", "1", "-f", "s16le", "-y", path])
        try #require(r.code == 0, "ffmpeg: \(r.stderr)")
        return (path, try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    static let question = "goforward.raw"
    static let shortReply = "librivox/sense_and_sensibility_01_austen_64kb-0880.wav"
    static let longReply = "librivox/sense_and_sensibility_01_austen_64kb-0870.wav"
    static let overTheReply = "librivox/sense_and_sensibility_01_austen_64kb-0890.wav"

    struct Setup {
        let r: Rig
        let reply: Data
        let dir: String
    }

    /// A node with talk in realtime mode (`mode` adds keys), the relay configured with `relay`.
    static func rig(mic: [(file: String?, seconds: Double)], replyFile: String = shortReply, mode: String = "",
                    relay: JSONValue = [:], gatewayArgs: [String] = ["--auto-approve", "--auto-approve-operator"],
                    operatorKey: String = "operator: true,", gateway: ((String) -> String)? = nil) throws -> Setup {
        let dir = TestPaths.tempDir("rt")
        let micFile = try microphone(mic, in: dir)
        let reply = try Self.reply(replyFile, in: dir)
        let r = try Rig(infile: micFile, gatewayArgs: gatewayArgs, gateway: gateway ?? { "url: '\($0)'" },
                        talk: "\(operatorKey) mode: { conversation: 'realtime', \(mode) }")
        var config: [String: JSONValue] = ["cmd": "relay", "replyFile": .string(reply.path)]
        for (k, v) in relay.objectValue ?? [:] { config[k] = v }
        r.gw.command(.object(config))
        _ = r.gw.waitFor("hello", timeout: 20) { $0["role"] == "operator" }
        return Setup(r: r, reply: reply.bytes, dir: dir)
    }

    static func start(_ s: Setup) throws -> JSONValue {
        // The operator session may still be connecting right after the node's hello.
        _ = waitUntil(timeout: 10) { s.r.node.log.contains("operator: connected") }
        return try s.r.call("talk.start", "{}", wait: 30)
    }

    static func stopAll(_ s: Setup) {
        s.r.stop()
        try? FileManager.default.removeItem(atPath: s.dir)
    }

    /// The spoken file once it stopped growing.
    static func spoken(_ r: Rig) -> Data {
        _ = TalkPTTTests.played(r.spoken, sampleRate: 24_000)
        return (try? Data(contentsOf: URL(fileURLWithPath: r.spoken))) ?? Data()
    }

    @Test func theRelayHearsTheWordsAndThePersonHearsTheReply() throws {
        let s = try Self.rig(mic: [(nil, 0.5), (Self.question, 0), (nil, 1.2), (Self.overTheReply, 0), (nil, 6)], mode: "bargeIn: false")
        defer { Self.stopAll(s) }
        let r = s.r
        let op = try #require(r.gw.all("hello").last { $0["role"] == "operator" })
        #expect(op["scopes"] == ["operator.read", "operator.write"], "\(op)")
        let started = try Self.start(s)
        #expect(started["payload"] == ["started": true], "\(started) \(r.node.log.suffix(2000))")
        let create = try #require(r.gw.waitFor("relay_create"), "\(r.node.log.suffix(2000))")
        #expect(create["params"] == ["sessionKey": "main", "mode": "realtime", "transport": "gateway-relay", "brain": "agent-consult"],
                "only the params needed: \(create)")
        // Uplink: the relay decodes the words spoken into the fake microphone.
        let turn = try #require(r.gw.waitFor("relay_turn", timeout: 30), "\(r.node.log.suffix(2000))")
        #expect(turn["text"] == "go forward ten meters", "\(turn)")
        // Downlink: the reply's samples reach the speaker intact, and the mark is acknowledged
        // only once they have played.
        let reply = try #require(r.gw.waitFor("relay_reply"))
        let ack = try #require(r.gw.waitFor("relay_mark_ack", timeout: 30), "\(r.node.log.suffix(2000))")
        let playbackEnd = try #require(ack["playbackEnd"]?.doubleValue), acked = try #require(ack["t"]?.doubleValue)
        #expect(acked >= playbackEnd - 0.05, "acknowledged \(playbackEnd - acked) s before the reply could have played")
        #expect(ack["markName"] == "m-turn-1")
        let played = Self.spoken(r)
        #expect(played.count >= s.reply.count && played.prefix(s.reply.count) == s.reply,
                "the reply's \(s.reply.count) bytes, then silence: got \(played.count) bytes")
        // Half duplex: the recording spoken over the reply did not go up while it played.
        let start = try #require(reply["t"]?.doubleValue)
        let during = r.gw.all("relay_append").filter { a in
            let t = a["t"]?.doubleValue ?? 0
            return t > start + 0.1 && t < playbackEnd && (a["rms"]?.doubleValue ?? 0) > 800
        }
        #expect(during.isEmpty, "speech-level audio went up during the reply: \(during.prefix(3))")
        let after = r.gw.waitFor("relay_append", timeout: 10) { ($0["t"]?.doubleValue ?? 0) > playbackEnd + 0.3 && ($0["rms"]?.doubleValue ?? 0) > 800 }
        #expect(after != nil, "the microphone opens again after the reply")
        // The talk.event types and fields the node does not know were ignored; the contract held.
        #expect(r.gw.all("relay_error").isEmpty, "\(r.gw.all("relay_error"))")
        let stop = try r.call("talk.stop", "{}")
        #expect(stop["payload"] == ["stopped": true], "\(stop)")
        #expect(waitUntil(timeout: 10) { r.gw.all("relay_close").count == 1 }, "exactly one talk.session.close")
        #expect(try r.call("talk.stop", "{}")["payload"] == ["stopped": false])
        #expect(r.node.log.contains("realtime conversation ended: stopped"), "\(r.node.log.suffix(1500))")
    }

    /// Full duplex: the microphone stays open while the reply plays, through WebRTC's echo
    /// canceller fed with the reply as played (its cancelling is measured on real recordings in
    /// TalkEchoCancellerTests); the person speaking over the reply is still heard.
    @Test func fullDuplexKeepsTheMicrophoneOpenThroughTheEchoCanceller() throws {
        let s = try Self.rig(mic: [(nil, 0.5), (Self.question, 0), (nil, 1.2), (Self.overTheReply, 0), (nil, 4)],
                             replyFile: Self.longReply, mode: "duplex: 'full', bargeIn: false")
        defer { Self.stopAll(s) }
        let r = s.r
        #expect(try Self.start(s)["payload"] == ["started": true], "\(r.node.log.suffix(1500))")
        #expect(r.node.log.contains("full duplex, echo cancelled by webrtc-audio-processing"), "\(r.node.log.suffix(1500))")
        let reply = try #require(r.gw.waitFor("relay_reply", timeout: 30), "\(r.node.log.suffix(2000))")
        let start = try #require(reply["t"]?.doubleValue)
        let during = r.gw.waitFor("relay_append", timeout: 10) { a in
            let t = a["t"]?.doubleValue ?? 0
            return a["playingReply"] == true && t > start + 0.2 && (a["rms"]?.doubleValue ?? 0) > 800
        }
        #expect(during != nil, "the person's speech goes up while the reply plays")
        #expect(r.gw.all("relay_error").isEmpty, "\(r.gw.all("relay_error"))")
    }

    @Test func speakingOverTheReplyStopsIt() throws {
        let s = try Self.rig(mic: [(nil, 0.5), (Self.question, 0), (nil, 1.4), (Self.overTheReply, 0), (nil, 6)],
                             replyFile: Self.longReply)
        defer { Self.stopAll(s) }
        let r = s.r
        #expect(try Self.start(s)["payload"] == ["started": true])
        let reply = try #require(r.gw.waitFor("relay_reply", timeout: 30), "\(r.node.log.suffix(2000))")
        let cancel = try #require(r.gw.waitFor("relay_cancel", timeout: 30), "\(r.node.log.suffix(2000))")
        #expect(cancel["params"]?["turnId"] == "turn-1" && cancel["params"]?["reason"] == "barge-in", "\(cancel)")
        #expect(cancel["status"] == "applied")
        let cancelledAt = try #require(cancel["t"]?.doubleValue), replyAt = try #require(reply["t"]?.doubleValue)
        #expect(cancelledAt - replyAt >= 0.25, "not before the reply was heard for 250 ms")
        // Playback stopped: far less than the 7 s reply reached the speaker.
        let played = Self.spoken(r)
        #expect(played.count < s.reply.count / 2 && played.count > 0, "\(played.count) of \(s.reply.count) bytes played")
        // After the gateway's clear, what the person said goes up — from before the barge-in.
        let resumed = try #require(r.gw.waitFor("relay_append", timeout: 10) { ($0["t"]?.doubleValue ?? 0) > cancelledAt && ($0["rms"]?.doubleValue ?? 0) > 800 },
                                   "\(r.node.log.suffix(1500))")
        #expect(resumed["bytes"]?.intValue ?? 0 > 960 * 2 * 5, "the held speech goes up at once: \(resumed)")
        let second = try #require(r.gw.waitFor("relay_turn", timeout: 30) { $0["text"] != "go forward ten meters" }, "\(r.node.log.suffix(1500))")
        #expect((second["text"]?.stringValue ?? "").split(separator: " ").count >= 3, "the words spoken over the reply were heard: \(second)")
        #expect(r.gw.all("relay_error").isEmpty, "\(r.gw.all("relay_error"))")
    }

    @Test func theGatewaysClearStopsPlaybackAndReleasesTheMark() throws {
        let s = try Self.rig(mic: [(nil, 0.5), (Self.question, 0), (nil, 10)], replyFile: Self.longReply, relay: ["clearAfterMs": 600])
        defer { Self.stopAll(s) }
        let r = s.r
        #expect(try Self.start(s)["payload"] == ["started": true])
        let clear = try #require(r.gw.waitFor("relay_server_clear", timeout: 40), "\(r.node.log.suffix(2000))")
        let ack = try #require(r.gw.waitFor("relay_mark_ack", timeout: 10))
        let clearedAt = try #require(clear["t"]?.doubleValue)
        #expect((ack["t"]?.doubleValue ?? 0) >= clearedAt && (ack["t"]?.doubleValue ?? 0) < (ack["playbackEnd"]?.doubleValue ?? 0),
                "the pending mark is released by the clear, before the reply could have ended: \(ack)")
        let seconds = Double(Self.spoken(r).count) / 48_000
        #expect(seconds > 0.3 && seconds < 1.6, "playback stopped about 0.6 s in: \(seconds) s played")
    }

    @Test(arguments: ["consult", "forced", "control"])
    func theProvidersToolCallsAreAnswered(_ tool: String) throws {
        let s = try Self.rig(mic: [(nil, 0.5), (Self.question, 0), (nil, 8)], relay: ["tool": .string(tool)])
        defer { Self.stopAll(s) }
        let r = s.r
        #expect(try Self.start(s)["payload"] == ["started": true])
        if tool == "control" {
            let steer = try #require(r.gw.waitFor("relay_steer", timeout: 30), "\(r.node.log.suffix(2000))")
            #expect(steer["params"]?["text"] == "status" && steer["params"]?["mode"] == "status", "\(steer)")
            let result = try #require(r.gw.waitFor("relay_tool_result", timeout: 10))
            #expect(result["params"]?["result"]?["message"] == "Nothing is running.", "the steer's whole result: \(result)")
        } else {
            let call = try #require(r.gw.waitFor("relay_toolcall", timeout: 30), "\(r.node.log.suffix(2000))")
            let p = try #require(call["params"])
            #expect(p["name"] == "openclaw_agent_consult" && p["sessionKey"] == "main" && p["args"]?["question"] == "go forward ten meters", "\(p)")
            let results = { r.gw.all("relay_tool_result") }
            #expect(waitUntil(timeout: 10) { results().contains { $0["params"]?["result"]?["text"] != nil } }, "\(results())")
            let final = try #require(results().last)
            #expect(final["params"]?["result"] == ["text": "forty two"], "the agent's final answer: \(final)")
            let working = results().filter { $0["params"]?["options"]?["willContinue"] == true }
            #expect(working.count == (tool == "forced" ? 1 : 0), "a forced consult says it is working first: \(results())")
        }
        // The reply comes after the tool result, and plays.
        #expect(r.gw.waitFor("relay_mark_ack", timeout: 30) != nil, "\(r.node.log.suffix(1500))")
        #expect(r.gw.all("relay_error").isEmpty, "\(r.gw.all("relay_error"))")
    }

    @Test func aCloseFromTheGatewayOrSilenceEndsItWithoutAClose() throws {
        let s = try Self.rig(mic: [(nil, 0.5), (Self.question, 0), (nil, 30)], mode: "endAfterSilence: 5")
        defer { Self.stopAll(s) }
        let r = s.r
        #expect(try Self.start(s)["payload"] == ["started": true])
        #expect(try r.call("talk.start", "{}")["payload"] == ["started": false, "alreadyActive": true])
        _ = try #require(r.gw.waitFor("relay_mark_ack", timeout: 30), "\(r.node.log.suffix(2000))")
        r.gw.command(["cmd": "relay_close"])
        #expect(waitUntil(timeout: 10) { r.node.log.contains("realtime conversation ended: the gateway closed it (completed)") },
                "\(r.node.log.suffix(1500))")
        #expect(r.gw.all("relay_close").isEmpty, "no talk.session.close after the gateway's close")
        #expect(try r.call("talk.stop", "{}")["payload"] == ["stopped": false])
        // A new one; nobody speaks: it ends by itself after 5 s, closing the relay.
        #expect(try r.call("talk.start", "{}", wait: 30)["payload"] == ["started": true])
        #expect(waitUntil(timeout: 20) { r.node.log.contains("realtime conversation ended: nobody spoke for 5 s") }, "\(r.node.log.suffix(1500))")
        #expect(waitUntil(timeout: 5) { r.gw.all("relay_close").count == 1 })
    }

    @Test func aProviderThatNeverGetsReadyOrAMissingScopeIsAClearError() throws {
        let s = try Self.rig(mic: [(nil, 2)], relay: ["ready": "never"])
        defer { Self.stopAll(s) }
        let r = s.r
        let began = Date()
        let never = try Self.start(s)
        #expect(never["error"]?["code"] == "UNAVAILABLE", "\(never)")
        #expect(never["error"]?["message"]?.stringValue?.contains("not ready within 12 s") == true, "\(never)")
        #expect(Date().timeIntervalSince(began) < 20)
        #expect(waitUntil(timeout: 5) { r.gw.all("relay_close").count == 1 }, "the half-made session is closed")
        r.gw.command(["cmd": "relay", "ready": "error"])
        let failed = try r.call("talk.start", "{}", wait: 30)
        #expect(failed["error"]?["message"]?.stringValue?.contains("fake provider: connect failed") == true, "\(failed)")
        r.gw.command(["cmd": "relay", "ready": "yes", "denyScope": true])
        let denied = try r.call("talk.start", "{}", wait: 30)
        #expect(denied["error"]?["message"]?.stringValue?.contains("missing scope: operator.talk") == true &&
                denied["error"]?["message"]?.stringValue?.contains("--voice-node") == true, "\(denied)")
        // The microphone was given back each time: a conversation starts now.
        r.gw.command(["cmd": "relay", "denyScope": false])
        #expect(try r.call("talk.start", "{}", wait: 30)["payload"] == ["started": true], "\(r.node.log.suffix(1500))")
    }

    /// `openclaw qr --voice-node`: the setup code's operator token carries read + talk, and that is
    /// what the operator session asks for; realtime talk works with it.
    @Test func aVoiceNodeSetupCodeIsEnough() throws {
        let s = try Self.rig(mic: [(nil, 0.5), (Self.question, 0), (nil, 8)],
                             gatewayArgs: ["--bootstrap", "boot-voice", "--voice-node"], operatorKey: "") { url in
            let code = Encoding.base64url(Array(#"{"url":"\#(url)","bootstrapToken":"boot-voice"}"#.utf8))
            return "setupCode: '\(code)'"
        }
        defer { Self.stopAll(s) }
        let r = s.r
        let op = try #require(r.gw.all("hello").last { $0["role"] == "operator" }, "\(r.node.log.suffix(2000))")
        #expect(op["scopes"] == ["operator.read", "operator.talk"], "\(op)")
        let status = try r.node.cli(["status"])
        #expect(status.stdout.contains("Talk:         talk.start holds a realtime conversation"), "\(status.stdout)")
        #expect(try Self.start(s)["payload"] == ["started": true], "\(r.node.log.suffix(1500))")
        let turn = try #require(r.gw.waitFor("relay_turn", timeout: 30))
        #expect(turn["text"] == "go forward ten meters")
    }

    /// Without a realtime provider (talk.catalog not ready), `auto` holds the conversation with the
    /// offline recognizer: the words go out with chat.send and the reply is spoken.
    @Test func withoutARealtimeProviderTheLoopTalks() throws {
        let metricsPort = try freeLoopbackPort()
        // A stand-in logind on a private system bus: the conversation keeps the device awake.
        let bus = try PrivateBus(); defer { bus.stop() }
        let logind = try PythonServer(script: "fake_logind.py", args: [bus.address]); defer { logind.stop() }
        let r = try Rig(gatewayArgs: ["--auto-approve", "--auto-approve-operator"], talk: "operator: true",
                        nodeExtra: "metrics: { listen: '127.0.0.1:\(metricsPort)' }", nodeEnv: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address])
        defer { r.stop() }
        r.gw.command(["cmd": "relay", "catalogReady": false])
        // (The node's log says when the operator session is up; its hello may come before or after the node's.)
        #expect(waitUntil(timeout: 20) { r.node.log.contains("operator: connected") }, "\(r.node.log.suffix(1500))")
        #expect(try r.call("talk.start", "{}")["payload"] == ["started": true], "\(r.node.log.suffix(1500))")
        let sent = try #require(r.gw.waitFor("chat_send", timeout: 30), "\(r.node.log.suffix(2000))")
        #expect(sent["params"]?["message"] == "go forward ten meters", "\(sent)")
        #expect(waitUntil(timeout: 20) { r.node.log.contains("spoke the agent's reply") }, "\(r.node.log.suffix(1500))")
        #expect(r.gw.all("relay_create").isEmpty, "no realtime session without a ready provider")
        #expect(r.node.log.contains("starting a conversation: listen and reply (the gateway has no realtime provider ready"), "\(r.node.log.suffix(1500))")
        let inhibit = try #require(JSONValue.parse(logind.nextLine() ?? ""), "\(r.node.log.suffix(1500))")
        #expect(inhibit["inhibit"]?["why"] == "talk conversation" && inhibit["inhibit"]?["what"] == "idle:sleep", "\(inhibit)")
        let during = try httpGet(port: metricsPort, path: "/metrics").body
        #expect(during.contains("openclaw_node_talk_conversation_active{kind=\"loop\"} 1\n"), "\(during)")
        #expect(try r.call("talk.stop", "{}")["payload"] == ["stopped": true])
        #expect(waitUntil(timeout: 10) { r.node.log.contains("conversation ended: stopped") }, "\(r.node.log.suffix(1500))")
        let released = try #require(JSONValue.parse(logind.nextLine() ?? ""), "the lock outlived the conversation")
        #expect(released["released"] == inhibit["inhibit"]?["id"], "\(released)")
        let after = try httpGet(port: metricsPort, path: "/metrics").body
        #expect(after.contains("openclaw_node_talk_conversation_active{kind=\"loop\"} 0\n"), "\(after)")
        #expect(after.contains("openclaw_node_talk_conversations_total{kind=\"loop\"} 1\n"), "\(after)")
    }

    /// The loop ends by itself when nobody speaks for `endAfterSilence`.
    @Test func theLoopEndsWhenNobodySpeaks() throws {
        let dir = TestPaths.tempDir("loop")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let quiet = try Self.microphone([(nil, 2)], in: dir)
        let r = try Rig(infile: quiet, talk: "mode: { conversation: 'loop', endAfterSilence: 5 }")
        defer { r.stop() }
        let began = Date()
        #expect(try r.call("talk.start", "{}")["payload"] == ["started": true], "\(r.node.log.suffix(1500))")
        #expect(waitUntil(timeout: 20) { r.node.log.contains("conversation ended: nobody spoke for 5 s") }, "\(r.node.log.suffix(1500))")
        // Anything under 12 s from the start cannot be the listening cap (which runs from after it).
        #expect(Date().timeIntervalSince(began) < 11.9, "about 5 s, not the 12 s listening cap")
        #expect(try r.call("talk.stop", "{}")["payload"] == ["stopped": false])
    }
}
