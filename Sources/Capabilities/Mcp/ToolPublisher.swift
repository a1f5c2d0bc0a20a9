import Kit
import Support

/// Publishes the tool catalogue to the gateway (`node.pluginTools.update`) by the reference
/// host's rules: the whole catalogue after every hello-ok and whenever it changes, never the value
/// the gateway already accepted (or refused) again in that session, transient failures retried at
/// 250 ms doubling to 5 s, and nothing more once the gateway says it does not know the method.
actor ToolPublisher {
    private let log = Logger(component: "mcp")
    private var link: GatewayLink?
    private var session = 0
    private var unsupported = false
    private var lastAccepted: [PluginToolDescriptor]?
    private var lastRejected: [PluginToolDescriptor]?
    private var current: [PluginToolDescriptor]?
    /// The publishing loop while it runs; a disconnect ends it (it stops on a changed session).
    private var running: Task<Void, Never>?
    /// How many updates the gateway accepted (tests and `mcp list`).
    private(set) var accepted = 0

    func connected(_ link: GatewayLink) {
        self.link = link
        session += 1
        unsupported = false; lastAccepted = nil; lastRejected = nil
        kick()
    }

    func disconnected() { link = nil; session += 1 }

    /// The capability's end: the publishing loop stops.
    func stop() { link = nil; session += 1; running?.cancel() }

    /// The catalogue now (nil until the servers' first start is over: nothing is published before).
    func update(_ catalogue: [PluginToolDescriptor]) {
        current = catalogue
        kick()
    }

    var status: JSONValue {
        ["accepted": .number(Double(accepted)), "gatewaySupportsTools": .bool(!unsupported),
         "published": .number(Double(lastAccepted?.count ?? 0))]
    }

    private func kick() {
        guard running == nil else { return }
        running = Task { await self.run(); self.running = nil }
    }

    private func run() async {
        var attempt = 0
        while let link, let value = current, !unsupported, value != lastAccepted, value != lastRejected {
            let mySession = session
            let answer = await link.updatePluginTools(value)
            guard mySession == session else { attempt = 0; continue }
            switch answer {
            case .accepted(let payload):
                lastAccepted = value
                accepted += 1
                attempt = 0
                let kept = payload["tools"]?.arrayValue?.count ?? value.count
                log.info("published \(value.count) MCP tool(s) to the gateway\(kept == value.count ? "" : "; it kept \(kept) (its command policy or the operator's settings drop the others)")")
            case .unsupported(let why):
                unsupported = true
                log.info("the gateway does not take node tools (\(why)); not publishing them on this connection")
            case .rejected(let why):
                lastRejected = value
                log.warn("the gateway refused the tool catalogue: \(why)")
            case .transient(let why):
                let delay = PublicationAnswer.retryDelay(attempt: attempt)
                attempt += 1
                log.debug("publishing tools failed (\(why)); again in \(delay)")
                try? await Task.sleep(for: delay)
            }
        }
    }
}
