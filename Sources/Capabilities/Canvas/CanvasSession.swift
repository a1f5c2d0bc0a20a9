import Config
import Glibc
import Kit
import Media
import X11Support
import Support

/// The canvas state behind the commands: the browser, what it shows, and the gateway session
/// (canvas host URL, main session key, the event sender for A2UI actions).
///
/// Operations that use the page run one at a time (`serially`): an actor alone would interleave
/// them at every await, and a reconnect's switch to the A2UI page could then undo the page an
/// agent had just opened.
actor CanvasSession {
    /// What the page shows, as far as we know.
    enum PageState: Equatable {
        /// Nothing loaded in this browser yet.
        case nothing
        case showing(CanvasURL.Target)
        /// A load failed or timed out: the page may be anything (even the target, later).
        case unknown
    }

    let settings: CanvasSettings
    private let log: Logger
    private var browser: CanvasBrowser?
    private var link: GatewayLink?
    private var page: PageState = .nothing
    /// Which browser start the page state belongs to (CanvasBrowser.starts); a new start shows a blank page.
    private var pageStart = 0
    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []
    private var actions = ActionRateLimit()
    private var supervisor: Task<Void, Never>?
    /// A kiosk's screen must not blank while the canvas window is shown: held from
    /// canvas.present until canvas.hide (or the node stops).
    private let keepAwake: any KeepAwake
    private var shown: KeepAwakeHold?
    /// And the X screensaver (with DPMS) of the window's display off while it is shown.
    private var screenOn: X11ScreenSaverSuspension?

    init(settings: CanvasSettings, log: Logger, keepAwake: any KeepAwake = NoKeepAwake()) {
        self.settings = settings
        self.log = log
        self.keepAwake = keepAwake
    }

    /// A canvas host URL the gateway handed out on refresh (capability tokens expire).
    private var refreshedHost: String?

    var canvasHost: String? { refreshedHost ?? link?.pluginSurfaceUrls["canvas"] ?? link?.canvasHostUrl }

    /// Asks the gateway for a fresh scoped canvas URL (newest gateways: plugin surface; older:
    /// canvas capability). True when it gave one.
    private func refreshCanvasHost() async -> Bool {
        guard let link else { return false }
        let fresh: String?
        if link.pluginSurfaceUrls["canvas"] != nil { fresh = await link.refreshPluginSurfaceURL("canvas") }
        else if link.canvasHostUrl != nil { fresh = await link.refreshCanvasCapabilityURL() }
        else { fresh = nil }
        guard let fresh else { return false }
        refreshedHost = fresh
        log.info("canvas host capability refreshed")
        return true
    }

    // MARK: one operation at a time

    private func serially<T: Sendable>(_ body: () async throws(NodeError) -> T) async throws(NodeError) -> T {
        if busy { await withCheckedContinuation { waiting.append($0) } } else { busy = true }
        defer { if waiting.isEmpty { busy = false } else { waiting.removeFirst().resume() } }
        return try await body()
    }

    // MARK: browser and page

    private func theBrowser() throws(NodeError) -> CanvasBrowser {
        if let browser { return browser }
        let options = try settings.browserOptions.get()
        let b = CanvasBrowser(options: options, log: log) { [weak self] payload, context in
            Task { await self?.handleAction(payload, from: context) }
        }
        browser = b
        return b
    }

    /// The browser running with a page: after a (re)start, the page it showed before (the
    /// scaffold the first time, or when what it showed is unknown).
    private func ready(deadline: ContinuousClock.Instant?) async throws(NodeError) -> CanvasBrowser {
        let b = try theBrowser()
        _ = try await b.ensure()
        let starts = await b.starts
        if starts != pageStart {
            if pageStart != 0 { log.warn("canvas browser restarted; reloading the page") }
            var target = CanvasURL.Target.scaffold
            if case .showing(let t) = page { target = t }
            try await load(target, on: b, deadline: deadline)
        }
        return b
    }

    /// Runs `body` on the ready browser; when it failed because the browser or its page died under
    /// it (killed, renderer crash), starts a new one, reloads the page and tries once more.
    private func withBrowser<T: Sendable>(deadline: ContinuousClock.Instant?,
                                          _ body: (CanvasBrowser) async throws(NodeError) -> T) async throws(NodeError) -> T {
        let b = try await ready(deadline: deadline)
        do { return try await body(b) } catch {
            guard await !b.isRunning else { throw error }
            return try await body(try await ready(deadline: deadline))
        }
    }

    private func load(_ target: CanvasURL.Target, on b: CanvasBrowser, deadline: ContinuousClock.Instant?) async throws(NodeError) {
        let url: String
        switch target {
        case .scaffold: url = ScaffoldPage.url
        case .url(let u): url = u
        }
        let started = ContinuousClock.now
        _ = try await b.ensure()
        pageStart = await b.starts
        page = .unknown
        try await b.navigate(url, timeout: Self.bounded(settings.navigationTimeout, by: deadline))
        page = .showing(target)
        log.debug("canvas showed \(CanvasBrowser.display(url)) in \(started.duration(to: .now))")
    }

    func navigate(_ raw: String, deadline: ContinuousClock.Instant?) async throws(NodeError) {
        let target = try CanvasURL.resolve(raw, canvasHost: canvasHost)
        try await serially { () throws(NodeError) in
            let b = try theBrowser()
            try await load(target, on: b, deadline: deadline)
            // A URL on the canvas host that the host refused: the scoped capability expired.
            // Refresh it once (as for A2UI) and load the same path through the new one.
            guard CanvasURL.isOnCanvasHost(raw), [401, 403].contains(await b.responseStatus()),
                  await refreshCanvasHost() else { return }
            try await load(try CanvasURL.resolve(raw, canvasHost: canvasHost), on: b, deadline: deadline)
        }
    }

    func present(url: String?, placement: CanvasPlacement?, deadline: ContinuousClock.Instant?) async throws(NodeError) {
        let target = try url.flatMap { $0.trimmed().isEmpty ? nil : $0 }
            .map { (u) throws(NodeError) in try CanvasURL.resolve(u, canvasHost: canvasHost) }
        try await serially { () throws(NodeError) in
            if let target { try await load(target, on: try theBrowser(), deadline: deadline) }
            let b = try await ready(deadline: deadline)
            // In range after validated(); clamped all the same, never trapped on.
            let px = { (d: Double) in Int(clamping: d, to: -32768...32767) }
            let bounds = placement.map { p in (x: p.x.map(px), y: p.y.map(px), width: p.width.map(px), height: p.height.map(px)) }
            try await b.setWindow(visible: true, bounds: bounds)
            if shown == nil { shown = keepAwake.hold("canvas window shown") }
            if screenOn == nil, settings.window, let display = settings.display, !display.hasPrefix("wayland") {
                screenOn = X11ScreenSaverSuspension(display: display)
            }
        }
    }

    func hide() async throws(NodeError) {
        try await serially { () throws(NodeError) in
            shown?.release()
            shown = nil
            screenOn?.end()
            screenOn = nil
            guard let browser, await browser.isRunning else { return }
            try await browser.setWindow(visible: false, bounds: nil)
        }
    }

    // MARK: eval

    func eval(_ script: String, deadline: ContinuousClock.Instant?) async throws(NodeError) -> String {
        let timeout = Self.bounded(settings.evalTimeout, by: deadline)
        let r = try await serially { () throws(NodeError) in
            try await withBrowser(deadline: deadline) { (b) throws(NodeError) in try await b.evaluate(script, timeout: timeout) }
        }
        if let ex = r["exceptionDetails"] {
            let text = ex["exception"]?["description"]?.stringValue ?? ex["text"]?.stringValue ?? "uncaught exception"
            throw CanvasError.evalFailed(String(text.split(separator: "\n").first ?? "uncaught exception"))
        }
        return Self.stringForm(r["result"] ?? .null)
    }

    /// The string form of a returned value, as the Apple nodes give it: strings as they are,
    /// numbers and booleans as JavaScript prints them, objects as JSON, null/undefined as "".
    static func stringForm(_ o: JSONValue) -> String {
        if let u = o["unserializableValue"]?.stringValue { return u }
        switch o["type"]?.stringValue {
        case "undefined": return ""
        case "string": return o["value"]?.stringValue ?? ""
        case "number", "boolean", "bigint": return o["description"]?.stringValue ?? o["value"]?.jsonString() ?? ""
        default:
            guard let v = o["value"], v != .null else { return o["subtype"] == "null" ? "" : (o["description"]?.stringValue ?? "") }
            return v.jsonString()
        }
    }

    // MARK: snapshot

    func snapshot(format: String, maxWidth: Int, quality: Int, budget payload: PayloadBudget,
                  deadline: ContinuousClock.Instant?) async throws(NodeError) -> [UInt8] {
        try await serially { () throws(NodeError) in
            let (b, m) = try await withBrowser(deadline: deadline) { (b) throws(NodeError) in
                (b, try await b.evaluate("[innerWidth, innerHeight, devicePixelRatio || 1, scrollX, scrollY]", timeout: .seconds(5)))
            }
            let dims = m["result"]?["value"]?.arrayValue?.compactMap(\.doubleValue) ?? []
            guard dims.count == 5, dims[0] > 0, dims[1] > 0 else { throw CanvasError.unavailable("the page has no viewport") }
            // The clip is in page coordinates: the visible part of a scrolled page starts at the scroll offset.
            let viewport = CanvasBrowser.Viewport(x: dims[3], y: dims[4], width: dims[0], height: dims[1])
            let dpr = dims[2]
            let budget = payload.base64Bytes(cappedAt: 25 << 20)
            var scale = min(1, Double(maxWidth) / (viewport.width * dpr))
            var q = quality
            while true {
                let data = try await b.screenshot(format: format, quality: format == "jpeg" ? q : nil, scale: scale, viewport: viewport)
                if PayloadBudget.fits(bytes: data.count, base64Budget: budget) { return data }
                // Too big for the gateway: lower the JPEG quality first, then the size.
                if format == "jpeg", q > 40 { q = max(40, q * 3 / 4); continue }
                scale *= 0.75
                guard viewport.width * dpr * scale >= 16 else {
                    throw PayloadBudget.tooLarge("the canvas snapshot does not fit in \(payload.maxPayloadBytes) bytes")
                }
            }
        }
    }

    // MARK: A2UI

    func a2ui(_ script: String, deadline: ContinuousClock.Instant?) async throws(NodeError) -> JSONValue {
        guard canvasHost != nil else { throw CanvasError.a2uiHostNotConfigured }
        return try await serially { () throws(NodeError) in
            let b = try await ready(deadline: deadline)
            do throws(NodeError) {
                try await showA2UI(on: b, deadline: deadline)
            } catch {
                // Like the apps: the scoped URL may have expired; refresh it once and retry.
                guard await refreshCanvasHost() else { throw error }
                try await showA2UI(on: b, deadline: deadline)
            }
            let r = try await b.evaluate(script, timeout: Self.bounded(settings.evalTimeout, by: deadline))
            if let ex = r["exceptionDetails"] {
                throw CanvasError.evalFailed(ex["exception"]?["description"]?.stringValue ?? "A2UI script failed")
            }
            return r["result"]?["value"] ?? ["ok": true]
        }
    }

    /// The A2UI renderer on the page, ready for messages (loaded when it is not already).
    private func showA2UI(on b: CanvasBrowser, deadline: ContinuousClock.Instant?) async throws(NodeError) {
        guard let host = canvasHost else { throw CanvasError.a2uiHostNotConfigured }
        let a2uiPage = try CanvasURL.a2uiPage(canvasHost: host)
        if page == .showing(.url(a2uiPage)), await isA2UIReady(b) { return }
        do throws(NodeError) { try await load(.url(a2uiPage), on: b, deadline: deadline) } catch {
            throw CanvasError.a2uiHostUnavailable("A2UI host not reachable: \(error.message)")
        }
        let until = ContinuousClock.now + settings.a2uiReadyTimeout
        while !(await isA2UIReady(b)) {
            guard ContinuousClock.now < until else {
                throw CanvasError.a2uiHostUnavailable("A2UI host not reachable: \(a2uiPage) did not define openclawA2UI.applyMessages within \(settings.a2uiReadyTimeout)")
            }
            try? await Task.sleep(for: .milliseconds(120))
        }
    }

    private func isA2UIReady(_ b: CanvasBrowser) async -> Bool {
        let r = try? await b.evaluate(A2UIMessages.readyScript, timeout: .seconds(2))
        return r?["result"]?["value"]?.boolValue == true
    }

    // MARK: gateway

    func connected(_ link: GatewayLink) async {
        self.link = link
        refreshedHost = nil
        guard let host = canvasHost, let a2uiPage = try? CanvasURL.a2uiPage(canvasHost: host) else { return }
        // Like the apps: bring up the A2UI renderer on connect, unless an agent put something else up.
        do throws(NodeError) {
            try await serially { () throws(NodeError) in
                let running = await browser?.isRunning ?? false
                guard settings.window || running, page == .nothing || page == .showing(.scaffold) else { return }
                try await load(.url(a2uiPage), on: try theBrowser(), deadline: nil)
                log.info("canvas shows the A2UI page of the gateway")
            }
        } catch {
            log.warn("could not open the A2UI page on connect: \(error.message)")
        }
    }

    /// A user action from the page → `agent.request` to the gateway, then the status back to the page.
    func handleAction(_ payload: String, from context: PageContexts.Context?) async {
        guard let action = A2UIAction(message: payload), let browser = self.browser else { return }
        let mainFrame = await browser.targetId
        guard let context, context.frameId == mainFrame, isTrusted(origin: context.origin) else {
            log.warn("ignored an A2UI action from \(context.map { "\($0.origin.isEmpty ? "an opaque origin" : $0.origin)\($0.frameId == mainFrame ? "" : " (a subframe)")" } ?? "an unknown context"): " +
                     "actions count only from the scaffold, the canvas host or a local-network page")
            return
        }
        var ok = false, error = "gateway not connected"
        if !actions.allow(now: ContinuousClock.now) {
            error = "rate limited"
            log.warn("A2UI actions are coming too fast; dropped \(action.name)")
        } else if let link, await link.isConnected() {
            let p = action.eventPayload(sessionKey: link.mainSessionKey ?? "main", host: link.displayName, instanceId: link.nodeId)
            ok = await link.send(.agentRequest, p)
            error = ok ? "" : "send failed"
        }
        log.info("A2UI action \(action.name) (\(action.id)) → agent.request: \(ok ? "sent" : error)")
        _ = try? await browser.evaluate(A2UIAction.statusScript(id: action.id, ok: ok, error: error), timeout: .seconds(2))
    }

    /// Actions count from the scaffold (an opaque data: origin while we show it), the canvas host,
    /// or a page on this machine or the local network.
    private func isTrusted(origin: String) -> Bool {
        if origin.isEmpty || origin == "null" || origin == "://" { return page == .showing(.scaffold) }
        guard let url = URLParts(string: origin), let host = url.host else { return false }
        if let h = canvasHost.flatMap({ URLParts(string: $0) }), h.host == host,
           (h.port ?? Self.defaultPort(h.scheme)) == (url.port ?? Self.defaultPort(url.scheme)) { return true }
        return LocalHost.isLocal(host)
    }

    private static func defaultPort(_ scheme: String) -> Int { scheme == "https" ? 443 : 80 }

    // MARK: lifecycle

    /// Window mode: the kiosk window is up from the start and comes back when it dies or was
    /// closed, also when the display is not up yet at boot (retried with backoff up to 30 s).
    func superviseWindow() {
        guard settings.window, supervisor == nil else { return }
        supervisor = Task { [weak self] in
            var delay: Duration = .seconds(1)
            while !Task.isCancelled {
                guard let self else { return }
                do throws(NodeError) {
                    try await self.serially { () throws(NodeError) in _ = try await self.ready(deadline: nil) }
                    delay = .seconds(1)
                } catch {
                    self.log.warn("canvas window: \(error.message); retrying in \(delay)")
                    delay = min(delay * 2, .seconds(30))
                }
                try? await Task.sleep(for: delay)
            }
        }
    }

    func shutdown() async {
        shown?.release()
        shown = nil
        screenOn?.end()
        screenOn = nil
        supervisor?.cancel()
        supervisor = nil
        await browser?.stop()
    }


    static func bounded(_ d: Duration, by deadline: ContinuousClock.Instant?) -> Duration {
        InvokeDeadline(deadline).bounding(d, endingBefore: .milliseconds(300), atLeast: .milliseconds(200))
    }
}

/// At most `burst` A2UI actions at once and `perSecond` on average: a page posting in a loop must
/// not flood the gateway with agent requests.
struct ActionRateLimit {
    var burst = 10.0
    var perSecond = 2.0
    private var tokens = 10.0
    private var last: ContinuousClock.Instant?

    mutating func allow(now: ContinuousClock.Instant) -> Bool {
        if let last { tokens = min(burst, tokens + (now - last).seconds * perSecond) }
        last = now
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }
}

/// Hosts on this machine or a private network. (Not .ts.net or 100.64/10: Tailscale Funnel names
/// are public, and 100.64/10 is also carrier-grade NAT. A tailnet canvas host is trusted as the
/// canvas host.)
enum LocalHost {
    static func isLocal(_ host: String) -> Bool {
        let h = host.lowercased().trimming(["[", "]"])
        if h == "localhost" || h.hasSuffix(".local") { return true }
        return ResolvedAddress.isLoopbackOrPrivate(h, sharedAddressSpace: false)
    }
}
