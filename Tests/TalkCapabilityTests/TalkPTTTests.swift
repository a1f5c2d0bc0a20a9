@testable import Config
import Foundation
@testable import Kit
@testable import Support
@testable import TalkCapability
@testable import TestSupport
import Testing

/// Push-to-talk through the daemon and the test gateway, with ALSA's `type file` PCM as the
/// microphone fed with human speech from Debian's pocketsphinx-testdata ("go forward ten meters").
@Suite(.serialized) struct TalkPTTTests {
    static let goForward = "/usr/share/pocketsphinx/test/data/goforward.raw"

    final class Rig: @unchecked Sendable {
        let gw: TestGateway
        let node: NodeUnderTest

        /// What the fake speaker played (raw S16_LE mono).
        var spoken: String { node.dir + "/spoken.raw" }

        /// `infile`: what the microphone hears (then silence). `gateway`: the node's gateway section
        /// given the test gateway's URL; `talk`: further `capabilities.talk` keys.
        init(infile: String = TalkPTTTests.goForward, device: String = "fakemic", wake: Bool = false,
             gatewayArgs: [String] = ["--auto-approve"], gateway: (String) -> String = { "url: '\($0)'" }, talk: String = "",
             asound: String = "", nodeExtra: String = "", nodeEnv: [String: String] = [:]) throws {
            gw = try TestGateway(stateFile: TestPaths.tempDir("gw") + "/gw.json", args: gatewayArgs)
            node = NodeUnderTest(gatewaySection: gateway(gw.url),
                                 extra: "capabilities: { talk: { enabled: true, captureDevice: '\(device)', " +
                                 "playbackDevice: 'fakespeaker', voiceWake: { enabled: \(wake) }, \(talk) }, camera: { enabled: false }, " +
                                 "screen: { enabled: false }, canvas: { enabled: false } }, \(nodeExtra)")
            let asoundrc = "pcm.fakemic {\n type file\n slave.pcm \"null\"\n file \"/dev/null\"\n infile \"\(infile)\"\n format \"raw\"\n}\n" +
                "pcm.fakespeaker {\n type file\n slave.pcm \"null\"\n file \"\(node.dir)/spoken.raw\"\n format \"raw\"\n}\n" + asound
            _ = FileManager.default.createFile(atPath: node.dir + "/.asoundrc", contents: Data(asoundrc.utf8))
            node.extraEnv = nodeEnv
            try node.start()
            // The node's own session: with `operator: true` an operator session connects beside it,
            // and an invoke sent after only the operator's hello reaches no node (seen in CI).
            guard gw.waitFor("hello", where: { $0["role"] == "node" }) != nil else { throw TestFailure("no hello: \(node.log)") }
        }

        func call(_ command: String, _ paramsJSON: String? = "{}", wait: TimeInterval = 20) throws -> JSONValue {
            try #require(gw.invoke(command, paramsJSON: paramsJSON, timeoutMs: 15_000, wait: wait), "\(node.log)")
        }

        func stop() { node.cleanup(); gw.stop() }
    }

    @Test func onceHearsSpeechAndHandsItToTheAgent() throws {
        let r = try Rig(); defer { r.stop() }
        let hello = try #require(r.gw.all("connect").last)
        #expect(hello["caps"]?.arrayValue?.contains("talk") == true)
        #expect(hello["permissions"]?["microphone"] == true && hello["permissions"]?["speechRecognition"] == true, "\(hello)")
        let started = Date()
        let once = try r.call("talk.ptt.once", nil)  // no params at all, as the apps' callers send
        let p = try #require(once["payload"], "\(once)")
        #expect(p["transcript"] == "go forward ten meters" && p["status"] == "queued", "\(p)")
        // The cap's timer starts after this call did: anything under 12 s ended on silence, however
        // long the transcription took on a busy machine.
        #expect(Date().timeIntervalSince(started) < 11.9, "ended on silence, before the 12 s cap")
        let event = try #require(r.gw.waitFor("node_event") { $0["name"] == "voice.transcript" }, "\(r.node.log)")
        #expect(event["payload"]?["text"] == "go forward ten meters")
        #expect(event["payload"]?["eventId"] == p["captureId"] && event["payload"]?["sessionKey"]?.stringValue?.isEmpty == false, "\(event)")
        #expect(r.gw.schemaErrors.isEmpty, "\(r.gw.schemaErrors)")
    }

    /// Seconds of audio in the fake speaker's file and its loudness (RMS), once it stopped growing.
    static func played(_ path: String, sampleRate: Int = 22_050) -> (seconds: Double, rms: Double) {
        var last = -1
        _ = waitUntil(timeout: 20) {
            let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
            defer { last = size }
            return size > 0 && size == last
        }
        guard let data = FileManager.default.contents(atPath: path), data.count >= 2 else { return (0, 0) }
        let samples = data.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        let rms = (samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(samples.count)).squareRoot()
        return (Double(samples.count) / Double(sampleRate), rms)
    }

    @Test func theAgentsReplyIsSpokenOnTheDevice() throws {
        let r = try Rig(); defer { r.stop() }
        let once = try #require(try r.call("talk.ptt.once")["payload"])
        #expect(once["status"] == "queued", "\(once)")
        let transcript = try #require(r.gw.waitFor("node_event") { $0["name"] == "voice.transcript" })
        let key = try #require(transcript["payload"]?["sessionKey"]?.stringValue)
        let sub = try #require(r.gw.waitFor("node_event") { $0["name"] == "chat.subscribe" }, "\(r.node.log)")
        #expect(sub["payload"]?["sessionKey"] == .string(key))
        func chat(_ run: String, _ session: String, _ state: String, _ text: String) {
            let frame: JSONValue = ["type": "event", "event": "chat", "payload": [
                "runId": .string(run), "sessionKey": .string(session), "seq": 1, "state": .string(state),
                "message": ["role": "assistant", "content": [["type": "text", "text": .string(text)]]]]]
            r.gw.command(["cmd": "raw", "text": .string(frame.jsonString())])
        }
        chat("other", "agent:other:main", "final", "Not for this node.")
        chat("run-1", key, "delta", "The robot")
        chat("run-1", key, "final", "{\"voice\":\"calm\"}\nThe robot will go forward ten meters.")
        #expect(waitUntil(timeout: 20) { r.node.log.contains("spoke the agent's reply") }, "\(r.node.log.suffix(1500))")
        let heard = Self.played(r.spoken)
        #expect(heard.seconds > 1 && heard.seconds < 8 && heard.rms > 300, "\(heard)")
        #expect(r.node.log.contains("spoke the agent's reply: 37 characters"), "the directive line is not spoken")
        // chat.push: spoken too.
        try? FileManager.default.removeItem(atPath: r.spoken)
        let push = try r.call("chat.push", #"{"text":"Your coffee is ready."}"#)
        #expect(push["payload"]?["messageId"]?.stringValue?.isEmpty == false, "\(push)")
        let pushed = Self.played(r.spoken)
        #expect(pushed.seconds > 0.5 && pushed.rms > 300, "\(pushed)")
        #expect(try r.call("chat.push", #"{"speak":true}"#)["error"]?["code"] == "INVALID_REQUEST")
    }

    /// Voice wake: the gateway's phrases arrive as voicewake.changed; the recording says "go forward
    /// ten meters", so "forward" wakes the node and "ten meters" goes to the agent; "computer" never fires.
    @Test func voiceWakeFiresOnItsPhraseOnly() throws {
        let r = try Rig(wake: true); defer { r.stop() }
        let hello = try #require(r.gw.all("connect").last)
        #expect(hello["caps"]?.arrayValue?.contains("voiceWake") == true, "\(hello)")
        func send(_ event: String, _ payload: JSONValue) {
            r.gw.command(["cmd": "raw", "text": .string((["type": "event", "event": .string(event), "payload": payload] as JSONValue).jsonString())])
        }
        send("voicewake.changed", ["triggers": ["computer", "openclaw"]])
        #expect(waitUntil(timeout: 10) { r.node.log.contains("for voice wake: \"computer\"") }, "\(r.node.log.suffix(1500))")
        #expect(r.node.log.contains("cannot listen for \"openclaw\""), "an unpronounceable phrase is named")
        usleep(5_000_000)  // the whole recording plays: no "computer" in it
        #expect(r.gw.all("node_event").filter { $0["name"] == "voice.transcript" }.isEmpty, "no false wake")
        send("voicewake.routing.changed", ["config": ["version": 1, "defaultTarget": ["mode": "current"],
                                                     "routes": [["trigger": "forward", "target": ["sessionKey": "agent:main:robot"]]]]])
        send("voicewake.changed", ["triggers": ["forward"]])
        let event = try #require(r.gw.waitFor("node_event", timeout: 15) { $0["name"] == "voice.transcript" }, "\(r.node.log.suffix(2000))")
        #expect(event["payload"]?["text"] == "ten meters" && event["payload"]?["sessionKey"] == "agent:main:robot", "\(event)")
        #expect(r.node.log.contains("wake phrase \"forward\" heard"))
        // Wake never listens in the background.
        #expect(try r.node.cli(["presence", "background"]).code == 0)
        func opens() -> Int { r.node.log.components(separatedBy: "microphone open").count - 1 }
        func closes() -> Int { r.node.log.components(separatedBy: "microphone closed").count - 1 }
        // The capability hears of the change a moment after the CLI returns (a listener opening in
        // that moment is closed at once): once the node says so and the microphone is closed,
        // nothing may open any more.
        #expect(waitUntil(timeout: 20) { r.node.log.contains("presence is now background") && opens() == closes() },
                "the microphone is closed in the background: \(r.node.log.suffix(1500))")
        let openedBefore = opens()
        usleep(4_000_000)
        #expect(opens() == openedBefore, "and stays closed: \(r.node.log.suffix(2500))")
    }

    /// Resident memory of a process, in MiB.
    static func rssMiB(_ pid: Int32) -> Double {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let kb = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }?.split(separator: " ").dropFirst().first.flatMap { Double($0) }
        return (kb ?? 0) / 1024
    }

    /// releaseModelAfter: the language model goes after a second without push-to-talk (the
    /// daemon's memory drops by its size), and the next capture loads it while it records.
    @Test func anIdleNodeGivesTheLanguageModelBack() throws {
        let r = try Rig(wake: true, talk: "releaseModelAfter: 1"); defer { r.stop() }
        let pid = try #require(r.node.process?.pid)
        let loaded = Self.rssMiB(pid)
        #expect(waitUntil(timeout: 15) { r.node.log.contains("language model released") }, "\(r.node.log.suffix(1500))")
        // The memory goes back to the system as the release finishes (after the line is written).
        #expect(waitUntil(timeout: 10) { loaded - Self.rssMiB(pid) > 50 }, "given back: \(loaded) MiB → \(Self.rssMiB(pid)) MiB")
        let once = try #require(try r.call("talk.ptt.once")["payload"], "\(r.node.log.suffix(1500))")
        #expect(once["transcript"] == "go forward ten meters" && once["status"] == "queued", "\(once)")
        #expect(r.node.log.contains("language model loaded in"), "\(r.node.log.suffix(1500))")
        // Released again; voice wake, which needs only the acoustic model, still hears its phrase
        // and the command after it, loading the language model while it records.
        #expect(waitUntil(timeout: 15) { r.node.log.components(separatedBy: "language model released").count > 2 }, "\(r.node.log.suffix(1500))")
        r.gw.command(["cmd": "raw", "text": .string((["type": "event", "event": "voicewake.changed",
                                                    "payload": ["triggers": ["forward"]]] as JSONValue).jsonString())])
        let event = try #require(r.gw.waitFor("node_event", timeout: 20) { $0["name"] == "voice.transcript" && $0["payload"]?["text"] == "ten meters" },
                                 "\(r.node.log.suffix(2000))")
        #expect(event["payload"]?["text"] == "ten meters")
    }

    @Test func keywordSpottingOnRealSpeech() throws {
        let audio = try TalkRecognizerTests.samples(TalkPTTTests.goForward)
        let dir = TestPaths.tempDir("kws")
        // One decoder: spotting, then recognition, then spotting again.
        let r = try PocketSphinxRecognizer()
        func spots(_ phrase: String) throws -> String? { try TalkRecognizerTests.spots(r, phrase, in: audio, listFile: dir + "/k.txt") }
        #expect(try spots("forward") == "forward")
        #expect(try TalkRecognizerTests.decode(r, audio).text == "go forward ten meters", "recognition after spotting")
        #expect(try spots("computer") == nil)
        #expect(WakePhrases.spottable(["Computer", "OpenClaw", "hey robot"], modelDir: PocketSphinxRecognizer.defaultModelDir)
                == (usable: ["computer", "hey robot"], unknown: ["OpenClaw"]))
        #expect(TalkCapability.command(after: "forward", in: "go forward ten meters") == "ten meters")
        #expect(TalkCapability.command(after: "hey robot", in: "hey robot stop") == "stop")
        #expect(TalkCapability.command(after: "forward", in: "go forward") == "")
        try? FileManager.default.removeItem(atPath: dir)
    }

    @Test func startStopCancelAndTheirStatuses() throws {
        let r = try Rig(); defer { r.stop() }
        #expect(try r.call("talk.ptt.stop")["payload"]?["status"] == "idle")
        #expect(try r.call("talk.ptt.cancel", "null")["payload"]?["status"] == "idle")
        let a = try #require(try r.call("talk.ptt.start")["payload"]?["captureId"]?.stringValue)
        #expect(try r.call("talk.ptt.start")["payload"]?["captureId"]?.stringValue == a, "start is idempotent")
        let busy = try r.call("talk.ptt.once")
        #expect(busy["payload"]?["status"] == "busy" && busy["payload"]?["captureId"]?.stringValue == a, "\(busy)")
        usleep(4_000_000)  // the recording says its sentence
        let stopped = try #require(try r.call("talk.ptt.stop")["payload"])
        #expect(stopped["captureId"]?.stringValue == a && stopped["transcript"] == "go forward ten meters" && stopped["status"] == "queued", "\(stopped)")
        let b = try #require(try r.call("talk.ptt.start")["payload"]?["captureId"]?.stringValue)
        #expect(b != a)
        let cancelled = try r.call("talk.ptt.cancel")
        #expect(cancelled["payload"] == ["captureId": .string(b), "status": "cancelled"], "\(cancelled)")
        #expect(r.gw.all("node_event").filter { $0["name"] == "voice.transcript" }.count == 1, "a cancelled capture sends nothing")
        // Nobody at the device: refused like the iOS node.
        #expect(try r.node.cli(["presence", "background"]).code == 0)
        #expect(try r.call("talk.ptt.start")["error"]?["code"] == "NODE_BACKGROUND_UNAVAILABLE")
    }

    @Test func silenceIsEmptyAndNoGatewayIsOffline() throws {
        let r = try Rig(infile: "/dev/zero"); defer { r.stop() }
        _ = try r.call("talk.ptt.start")
        usleep(1_000_000)
        let empty = try r.call("talk.ptt.stop")
        #expect(empty["payload"]?["status"] == "empty" && empty["payload"]?["transcript"] == nil, "\(empty)")
        // Without a gateway the CLI's in-process invoke recognises but cannot hand it over.
        let e = CLIEnv("presence: { mode: 'always' }, capabilities: { talk: { enabled: true, captureDevice: 'fakemic' }, camera: { enabled: false }, screen: { enabled: false }, canvas: { enabled: false } }")
        defer { e.cleanup() }
        let asoundrc = "pcm.fakemic {\n type file\n slave.pcm \"null\"\n file \"/dev/null\"\n infile \"\(TalkPTTTests.goForward)\"\n format \"raw\"\n}\n"
        _ = FileManager.default.createFile(atPath: e.dir + "/.asoundrc", contents: Data(asoundrc.utf8))
        let offline = try e.run(["invoke", "talk.ptt.once", "--local", "--config", e.config])
        let v = try #require(JSONValue.parse(offline.stdout), "\(offline.stdout)\(offline.stderr)")
        #expect(v["status"] == "offline" && v["transcript"] == "go forward ten meters", "\(v)")
    }

    @Test func aMissingDeviceMeansTalkIsNotAdvertised() throws {
        let e = CLIEnv("capabilities: { talk: { enabled: true, captureDevice: 'nosuchpcm' } }"); defer { e.cleanup() }
        let caps = try e.run(["caps", "--config", e.config])
        #expect(caps.stdout.contains("- talk.ptt.start"), "\(caps.stdout)")
        #expect(caps.stdout.contains("talk: ALSA device \"nosuchpcm\"") && caps.stdout.contains("capabilities.talk.captureDevice"), "\(caps.stdout)")
        let r = try e.run(["invoke", "talk.ptt.start", "--local", "--config", e.config])
        #expect(JSONValue.parse(r.stdout)?["code"] == "TALK_UNAVAILABLE", "\(r.stdout)")
        // doctor checks each part and says what to do.
        let doctor = try e.run(["doctor", "--config", e.config])
        #expect(doctor.stdout.contains("[ok  ] talk: speech model /usr/share/pocketsphinx/model/en-us"), "\(doctor.stdout)")
        #expect(doctor.stdout.contains("talk: ALSA device \"nosuchpcm\"") && doctor.stdout.contains("arecord -L"), "\(doctor.stdout)")
        #expect(doctor.stdout.contains("espeak-ng voice \"en\""), "\(doctor.stdout)")
        #expect(doctor.stdout.contains("[ok  ] talk: the gateway's voice plays as PCM, WAV, MP3 (libmpg123) and Ogg/Opus (libopusfile)"), "\(doctor.stdout)")
    }
}
