import Config
import FoundationEssentials
import Glibc
import Kit
import Media
import Support

/// Push-to-talk (docs/PROTOCOL.md §6.6): talk.ptt.start/stop/cancel/once record from the
/// microphone, recognise speech on the device (pocketsphinx), and hand the transcript to the agent
/// with `voice.transcript` on the node connection. Results are shaped as the iOS and Android nodes
/// return them.
final class TalkCapability: Capability, @unchecked Sendable {
    let name = TalkCommands.capabilityName
    let settings: TalkSettings
    private let log = Logger(component: "talk")
    private let lock = Lock()
    private var ptt: PushToTalk?
    private var link: GatewayLink?

    init(settings: TalkSettings) { self.settings = settings }

    var commands: [CommandSpec] { TalkCommands.specs(self) }

    /// Talk is advertised only when push-to-talk can work: the model is installed and the capture
    /// device opens (a device busy right now still exists).
    func availability() async -> Availability {
        if let missing = PocketSphinxRecognizer.missingModelFile(settings.modelDir) {
            return .unavailable("speech recognizer model not found (\(missing)); install it: sudo apt install pocketsphinx-en-us")
        }
        do { _ = try MicrophoneCapture(device: settings.captureDevice, sampleRate: 16_000, channels: 1).stop() } catch {
            if error.kind != .busy {
                return .unavailable("\(error.description); set capabilities.talk.captureDevice to a capture device (arecord -L)")
            }
        }
        return .available
    }

    /// The daemon loads the recognizer once (about a second) so the first push-to-talk is quick.
    func start() async -> Availability {
        do { _ = try session() } catch { return .unavailable(error.message) }
        return .available
    }

    func gatewayConnected(_ link: GatewayLink) async { lock.withLock { self.link = link } }
    func gatewayDisconnected() async {}
    func shutdown() async { _ = lock.withLock { ptt }?.cancel() }

    private func session() throws(NodeError) -> PushToTalk {
        try lock.withLock { () throws(NodeError) -> PushToTalk in
            if let ptt { return ptt }
            let started = ContinuousClock.now
            let recognizer = try PocketSphinxRecognizer(modelDir: settings.modelDir)
            log.info("speech recognizer ready (\(recognizer.name), loaded in \((ContinuousClock.now - started).milliseconds) ms)")
            let made = PushToTalk(recognizer: recognizer, device: settings.captureDevice)
            ptt = made
            return made
        }
    }

    // MARK: commands

    func start(_ p: NoParams, _ ctx: InvocationContext) async throws(NodeError) -> JSONValue {
        let ptt = try session()
        let started = try await Self.blocking { () throws(NodeError) in try ptt.start() }
        return ["captureId": .string(started.id)]
    }

    func stop(_ p: NoParams, _ ctx: InvocationContext) async throws(NodeError) -> JSONValue {
        let ptt = try session()
        guard let done = try await Self.blocking({ () throws(NodeError) in try ptt.stop() }) else {
            return ["captureId": .string(UUID().uuidString.lowercased()), "status": "idle"]
        }
        return await submit(done.id, done.transcript)
    }

    func cancel(_ p: NoParams, _ ctx: InvocationContext) async throws(NodeError) -> JSONValue {
        let ptt = try session()
        guard let id = try await Self.blocking({ () throws(NodeError) in ptt.cancel() }) else {
            return ["captureId": .string(UUID().uuidString.lowercased()), "status": "idle"]
        }
        return ["captureId": .string(id), "status": "cancelled"]
    }

    /// Starts a capture and stops it on speech followed by silence, or at 12 s; `busy` when a
    /// capture is already active or finishing.
    func once(_ p: NoParams, _ ctx: InvocationContext) async throws(NodeError) -> JSONValue {
        let ptt = try session()
        if let active = ptt.activeCaptureId { return ["captureId": .string(active), "status": "busy"] }
        let endpoint = Endpoint()
        _ = try await Self.blocking { () throws(NodeError) in try ptt.start(onEndpoint: { endpoint.fire() }) }
        let timer = DeadlineTimer.shared.schedule(at: .now + PushToTalk.onceCap) { endpoint.fire() }
        await endpoint.wait()
        DeadlineTimer.shared.cancel(timer)
        guard let done = try await Self.blocking({ () throws(NodeError) in try ptt.stop() }) else {
            return ["captureId": .string(UUID().uuidString.lowercased()), "status": "idle"]
        }
        return await submit(done.id, done.transcript)
    }

    /// `queued` when the transcript went to the gateway as voice.transcript, `offline` when there
    /// is no connection to send it on, `empty` when nothing was recognised.
    private func submit(_ id: String, _ transcript: String) async -> JSONValue {
        guard !transcript.isEmpty else { return ["captureId": .string(id), "status": "empty"] }
        let link = lock.withLock { self.link }
        var status = "offline"
        if let link, await link.isConnected() {
            let payload: JSONValue = ["text": .string(transcript), "sessionKey": .string(link.mainSessionKey ?? "main"),
                                      "eventId": .string(id)]
            if await link.sendEvent("voice.transcript", payload) { status = "queued" }
        }
        log.info("push-to-talk \(id.prefix(8)): \(transcript.count) characters, \(status)")
        return ["captureId": .string(id), "transcript": .string(transcript), "status": .string(status)]
    }

    /// Opening and closing ALSA devices blocks for up to ~100 ms: off the cooperative pool.
    private static func blocking<T: Sendable>(_ body: @escaping @Sendable () throws(NodeError) -> T) async throws(NodeError) -> T {
        try await BlockingThread.run("talk") { (_: CancelFlag) throws(NodeError) -> T in try body() }
    }
}

/// A one-shot signal for `once`: the first of endpoint and cap wins.
final class Endpoint: @unchecked Sendable {
    private let lock = Lock()
    private var fired = false
    private var waiter: CheckedContinuation<Void, Never>?

    func fire() {
        let w = lock.withLock { () -> CheckedContinuation<Void, Never>? in
            guard !fired else { return nil }
            fired = true
            defer { waiter = nil }
            return waiter
        }
        w?.resume()
    }

    func wait() async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let resumeNow = lock.withLock { () -> Bool in
                if fired { return true }
                waiter = c
                return false
            }
            if resumeNow { c.resume() }
        }
    }
}
