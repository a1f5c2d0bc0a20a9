import Foundation
import Media
import NodeHost

/// The canvas state behind the commands: the browser, what it shows, and the gateway session
/// (canvas host URL, main session key, the event sender for A2UI actions).
actor CanvasSession {
    let settings: CanvasSettings
    private let log: Logger
    private var browser: CanvasBrowser?
    private var link: GatewayLink?
    /// What the page shows (nil until the browser has loaded anything).
    private var shown: CanvasURL.Target?

    init(settings: CanvasSettings, log: Logger) {
        self.settings = settings
        self.log = log
    }

    var canvasHost: String? { link?.pluginSurfaceUrls["canvas"] ?? link?.canvasHostUrl }

    // MARK: browser and page

    private func theBrowser() throws(NodeError) -> CanvasBrowser {
        if let browser { return browser }
        let options = try settings.browserOptions.get()
        let b = CanvasBrowser(options: options, log: log) { [weak self] payload in
            Task { await self?.handleAction(payload) }
        }
        browser = b
        return b
    }

    /// The browser running with a page loaded: the scaffold (or, once a gateway advertised a
    /// canvas host, the A2UI page) the first time and after the browser had to be restarted.
    @discardableResult
    func ready(deadline: ContinuousClock.Instant?) async throws(NodeError) -> CanvasBrowser {
        let b = try theBrowser()
        let running = await b.isRunning
        let restarted = !running && shown != nil
        if restarted { log.warn("canvas browser not running; restarting it and reloading the page") }
        if shown == nil || restarted {
            let target = shown ?? .scaffold
            try await load(target, on: b, deadline: deadline)
        }
        return b
    }

    /// Runs `body` on the ready browser; when it failed because the browser died under it (killed,
    /// crashed), starts a new one, reloads the page and tries once more.
    private func withBrowser<T: Sendable>(deadline: ContinuousClock.Instant?,
                                          _ body: (CanvasBrowser) async throws(NodeError) -> T) async throws(NodeError) -> T {
        let b = try await ready(deadline: deadline)
        do { return try await body(b) } catch {
            guard await !b.isRunning else { throw error }
            return try await body(try await ready(deadline: deadline))
        }
    }

    func navigate(_ raw: String, deadline: ContinuousClock.Instant?) async throws(NodeError) {
        let target = try CanvasURL.resolve(raw, canvasHost: canvasHost)
        let b = try theBrowser()
        try await load(target, on: b, deadline: deadline)
    }

    private func load(_ target: CanvasURL.Target, on b: CanvasBrowser, deadline: ContinuousClock.Instant?) async throws(NodeError) {
        let url: String
        switch target {
        case .scaffold: url = ScaffoldPage.url
        case .url(let u): url = u
        }
        let started = ContinuousClock.now
        shown = nil  // a failed load leaves nothing known on screen
        try await b.navigate(url, timeout: Self.bounded(settings.navigationTimeout, by: deadline))
        shown = target
        log.debug("canvas showed \(CanvasBrowser.display(url)) in \(started.duration(to: .now))")
    }

    func present(url: String?, placement: CanvasPlacement?, deadline: ContinuousClock.Instant?) async throws(NodeError) {
        if let url, !url.trimmingCharacters(in: .whitespaces).isEmpty {
            try await navigate(url, deadline: deadline)
        }
        let b = try await ready(deadline: deadline)
        let bounds = placement.map { p in (x: p.x.map { Int($0) }, y: p.y.map { Int($0) },
                                           width: p.width.map { Int($0) }, height: p.height.map { Int($0) }) }
        try await b.setWindow(visible: true, bounds: bounds)
    }

    func hide() async throws(NodeError) {
        guard let browser, await browser.isRunning else { return }
        try await browser.setWindow(visible: false, bounds: nil)
    }

    // MARK: eval

    func eval(_ script: String, deadline: ContinuousClock.Instant?) async throws(NodeError) -> String {
        let timeout = Self.bounded(settings.evalTimeout, by: deadline)
        let r = try await withBrowser(deadline: deadline) { (b) throws(NodeError) in try await b.evaluate(script, timeout: timeout) }
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

    func snapshot(format: String, maxWidth: Int, quality: Int, maxPayloadBytes: Int,
                  deadline: ContinuousClock.Instant?) async throws(NodeError) -> Data {
        let (b, m) = try await withBrowser(deadline: deadline) { (b) throws(NodeError) in
            (b, try await b.evaluate("[innerWidth, innerHeight, devicePixelRatio || 1]", timeout: .seconds(5)))
        }
        let dims = m["result"]?["value"]?.arrayValue?.compactMap(\.doubleValue) ?? []
        guard dims.count == 3, dims[0] > 0, dims[1] > 0 else { throw CanvasError.unavailable("the page has no viewport") }
        let (w, h, dpr) = (dims[0], dims[1], dims[2])
        let budget = min(25 << 20, max(0, maxPayloadBytes - 4096))
        var scale = min(1, Double(maxWidth) / (w * dpr))
        var q = quality
        while true {
            let data = try await b.screenshot(format: format, quality: format == "jpeg" ? q : nil, scale: scale, width: w, height: h)
            if Base64Size.of(data.count) <= budget { return data }
            // Too big for the gateway: lower the JPEG quality first, then the size.
            if format == "jpeg", q > 40 { q = max(40, q * 3 / 4); continue }
            scale *= 0.75
            guard w * dpr * scale >= 16 else {
                throw NodeError("PAYLOAD_TOO_LARGE", "the canvas snapshot does not fit in \(maxPayloadBytes) bytes")
            }
        }
    }

    // MARK: A2UI

    func a2ui(_ script: String, deadline: ContinuousClock.Instant?) async throws(NodeError) -> JSONValue {
        guard let host = canvasHost else { throw CanvasError.a2uiHostNotConfigured }
        let page = try CanvasURL.a2uiPage(canvasHost: host)
        let b = try await ready(deadline: deadline)
        let onPage = shown == .url(page)
        let readyNow = onPage ? await isA2UIReady(b) : false
        if !readyNow {
            do { try await load(.url(page), on: b, deadline: deadline) } catch {
                throw CanvasError.a2uiHostUnavailable("A2UI host not reachable: \(error.message)")
            }
            let until = ContinuousClock.now + settings.a2uiReadyTimeout
            while !(await isA2UIReady(b)) {
                guard ContinuousClock.now < until else {
                    throw CanvasError.a2uiHostUnavailable("A2UI host not reachable: \(page) did not define openclawA2UI.applyMessages within \(settings.a2uiReadyTimeout)")
                }
                try? await Task.sleep(for: .milliseconds(120))
            }
        }
        let r = try await b.evaluate(script, timeout: Self.bounded(settings.evalTimeout, by: deadline))
        if let ex = r["exceptionDetails"] {
            throw CanvasError.evalFailed(ex["exception"]?["description"]?.stringValue ?? "A2UI script failed")
        }
        return r["result"]?["value"] ?? ["ok": true]
    }

    private func isA2UIReady(_ b: CanvasBrowser) async -> Bool {
        let r = try? await b.evaluate(A2UIMessages.readyScript, timeout: .seconds(2))
        return r?["result"]?["value"]?.boolValue == true
    }

    // MARK: gateway

    func connected(_ link: GatewayLink) async {
        self.link = link
        guard let host = canvasHost, let page = try? CanvasURL.a2uiPage(canvasHost: host) else { return }
        // Like the apps: bring up the A2UI renderer on connect, unless an agent put something else up.
        let windowMode = settings.window
        let running = await browser?.isRunning ?? false
        guard windowMode || running, shown == nil || shown == .scaffold else { return }
        do {
            let b = try theBrowser()
            try await load(.url(page), on: b, deadline: nil)
            log.info("canvas shows the A2UI page of the gateway")
        } catch {
            log.warn("could not open the A2UI page on connect: \(error.message)")
        }
    }

    /// A user action from the page → `agent.request` to the gateway, then the status back to the page.
    func handleAction(_ payload: String) async {
        guard let action = A2UIAction(message: payload), let browser = self.browser else { return }
        guard await isTrustedPage(browser) else {
            log.warn("ignored an A2UI action from a page that is neither the scaffold nor on the canvas host")
            return
        }
        var ok = false, error = "gateway not connected"
        if let link, await link.isConnected() {
            let p = action.eventPayload(sessionKey: link.mainSessionKey ?? "main", host: link.displayName, instanceId: link.nodeId)
            ok = await link.sendEvent("agent.request", p)
            error = ok ? "" : "send failed"
        }
        log.info("A2UI action \(action.name) (\(action.id)) → agent.request: \(ok ? "sent" : error)")
        _ = try? await browser.evaluate(A2UIAction.statusScript(id: action.id, ok: ok, error: error), timeout: .seconds(2))
    }

    /// Actions count only from our scaffold, the canvas host, or a page on this machine/LAN.
    private func isTrustedPage(_ b: CanvasBrowser) async -> Bool {
        guard let r = try? await b.evaluate("location.href", timeout: .seconds(2)),
              let href = r["result"]?["value"]?.stringValue, let url = URLComponents(string: href) else { return false }
        if url.scheme == "data" || url.scheme == "file" { return true }
        guard let pageHost = url.host?.lowercased() else { return false }
        if let h = canvasHost.flatMap({ URLComponents(string: $0)?.host?.lowercased() }), h == pageHost { return true }
        return LocalHost.isLocal(pageHost)
    }

    func shutdown() async {
        await browser?.stop()
    }

    var browserPid: pid_t? { get async { await browser?.pid } }

    static func bounded(_ d: Duration, by deadline: ContinuousClock.Instant?) -> Duration {
        guard let deadline else { return d }
        return max(.milliseconds(200), min(d, ContinuousClock.now.duration(to: deadline) - .milliseconds(300)))
    }
}

/// Hosts on this machine or the local network (the iOS node's rule for trusted canvas pages).
enum LocalHost {
    static func isLocal(_ host: String) -> Bool {
        let h = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        if h == "localhost" || h.hasSuffix(".local") || h.hasSuffix(".ts.net") || !h.contains(".") && !h.contains(":") { return true }
        if h.contains(":") { return h == "::1" || h.hasPrefix("fe80:") || h.hasPrefix("fd") || h.hasPrefix("fc") }
        let o = h.split(separator: ".").compactMap { Int($0) }
        guard o.count == 4 else { return false }
        switch (o[0], o[1]) {
        case (127, _), (10, _), (192, 168), (169, 254): return true
        case (172, 16...31), (100, 64...127): return true
        default: return false
        }
    }
}
