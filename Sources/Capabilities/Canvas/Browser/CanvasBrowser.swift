import Config
import Glibc
import Kit
import Support

/// The canvas page in a Chromium driven over the DevTools pipe: started on first use, restarted
/// when it died, one page target attached in flat session mode. Every operation has a timeout;
/// a page that never loads or a script that never returns gives an error, not a hang.
actor CanvasBrowser {
    /// A binding call from the page: its payload and the context (frame, origin) that made it.
    typealias BindingHandler = @Sendable (_ payload: String, _ context: PageContexts.Context?) -> Void

    private let options: BrowserProcess.Options
    private let log: Logger
    private var browser: BrowserProcess?
    private var contexts = PageContexts()
    private var session: String?
    private(set) var targetId: String?
    private var windowId: Int?
    /// The one start in progress; concurrent callers wait for it instead of starting another.
    private var starting: Task<Result<(pipe: CDPPipe, session: String), NodeError>, Never>?
    private(set) var starts = 0
    private let onBinding: BindingHandler

    /// The binding the page's A2UI bridge calls (Runtime.addBinding: no port, no HTTP).
    static let bindingName = "__openclawA2UIAction"

    init(options: BrowserProcess.Options, log: Logger, onBinding: @escaping BindingHandler) {
        self.options = options
        self.log = log
        self.onBinding = onBinding
        if geteuid() == 0 {
            log.warn("running as root: Chromium's sandbox is off (--no-sandbox); run the node as a normal user " +
                     "(openclaw-node service install) so web pages are sandboxed")
        }
    }

    /// The browser runs and its page has not crashed.
    var isRunning: Bool { browser?.isRunning == true && !contexts.isCrashed }

    /// The running browser's page session, starting (or restarting) the browser when needed.
    func ensure() async throws(NodeError) -> (pipe: CDPPipe, session: String) {
        if isRunning, let b = browser, let session { return (b.pipe, session) }
        if let starting { return try await starting.value.get() }
        let t = Task { await self.start() }
        starting = t
        let r = await t.value
        starting = nil
        return try r.get()
    }

    private func start() async -> Result<(pipe: CDPPipe, session: String), NodeError> {
        if let old = browser {
            log.warn(contexts.isCrashed ? "the canvas page crashed; starting a new browser"
                                        : "the canvas browser (pid \(old.process.pid)) is gone; starting a new one")
            await Self.stopOffPool(old)
        }
        browser = nil
        session = nil
        let started = ContinuousClock.now
        let handler = onBinding, name = Self.bindingName, log = self.log
        let contexts = PageContexts()
        self.contexts = contexts
        let b: BrowserProcess
        do {
            b = try BrowserProcess(options, onEvent: { method, params, _ in
                contexts.handle(method, params)
                switch method {
                case "Runtime.bindingCalled" where params["name"]?.stringValue == name:
                    handler(params["payload"]?.stringValue ?? "", contexts.context(params["executionContextId"]?.intValue))
                case "Inspector.targetCrashed":
                    log.warn("the canvas page crashed (renderer gone); the next command restarts the browser")
                default: break
                }
            }, onClose: { reason in log.debug("canvas browser: \(reason)") })
        } catch {
            return .failure(error)
        }
        browser = b
        starts += 1
        do {
            // The window's page appears a moment after the browser answers; creating our own
            // target instead would open a second, ordinary browser window.
            var page: JSONValue? = nil
            let until = ContinuousClock.now + .seconds(3)
            repeat {
                let targets = try await b.pipe.call("Target.getTargets")
                page = targets["targetInfos"]?.arrayValue?.first { $0["type"] == "page" }
                if page == nil { try? await Task.sleep(for: .milliseconds(25)) }
            } while page == nil && ContinuousClock.now < until
            let tid: String
            if let id = page?["targetId"]?.stringValue { tid = id } else {
                tid = try await b.pipe.call("Target.createTarget", ["url": "about:blank"])["targetId"]?.stringValue ?? ""
            }
            let attached = try await b.pipe.call("Target.attachToTarget", ["targetId": .string(tid), "flatten": true])
            guard let s = attached["sessionId"]?.stringValue else { throw CDPPipe.Failure(description: "no session for the page") }
            _ = try await b.pipe.call("Page.enable", session: s)
            _ = try await b.pipe.call("Runtime.enable", session: s)
            _ = try await b.pipe.call("Inspector.enable", session: s)
            _ = try await b.pipe.call("Runtime.addBinding", ["name": .string(name)], session: s)
            _ = try await b.pipe.call("Page.addScriptToEvaluateOnNewDocument", ["source": .string(A2UIBridgeScript.source)], session: s)
            if options.window {
                windowId = try? await b.pipe.call("Browser.getWindowForTarget", ["targetId": .string(tid)])["windowId"]?.intValue
            }
            session = s
            targetId = tid
            log.info("canvas browser started (pid \(b.process.pid), \(options.window ? "window on \(options.display ?? "$DISPLAY")" : "headless"), " +
                     "\(PathName.lastComponent(options.executable))) in \(started.duration(to: .now))")
            return .success((b.pipe, s))
        } catch {
            await Self.stopOffPool(b)
            if browser === b { browser = nil }
            let tail = (FileSystem.readText(options.profileDir + "/browser.log"))?
                .split(separator: "\n").suffix(3).joined(separator: " | ") ?? ""
            return .failure(CanvasError.unavailable("the browser did not start: \(error)\(tail.isEmpty ? "" : " (browser log: \(tail))")"))
        }
    }

    /// BrowserProcess.stop waits for the exit; not on the cooperative pool.
    static func stopOffPool(_ b: BrowserProcess) async {
        await BlockingExecutor.run("browser-stop") { (_: CancelFlag) in b.stop() }
    }

    /// Loads `url` and waits until the document has loaded (readyState complete), at most `timeout`.
    func navigate(_ url: String, timeout: Duration) async throws(NodeError) {
        let (pipe, s) = try await ensure()
        let deadline = ContinuousClock.now + timeout
        let nav: JSONValue
        do {
            nav = try await pipe.call("Page.navigate", ["url": .string(url)], session: s, timeout: timeout)
        } catch {
            throw CanvasError.unavailable("\(Self.display(url)) did not load: \(error)")
        }
        if let e = nav["errorText"]?.stringValue, !e.isEmpty {
            throw CanvasError.unavailable("\(Self.display(url)) did not load: \(e)")
        }
        while true {
            let state = try? await pipe.call("Runtime.evaluate", ["expression": "document.readyState", "returnByValue": true],
                                              session: s, timeout: .seconds(2))
            if state?["result"]?["value"]?.stringValue == "complete" { return }
            guard ContinuousClock.now < deadline else {
                throw CanvasError.unavailable("\(Self.display(url)) did not finish loading within \(timeout)")
            }
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    /// The HTTP status of the page's main document (0 when unknown, e.g. data: pages).
    func responseStatus() async -> Int {
        let r = try? await evaluate("(performance.getEntriesByType('navigation')[0] || {}).responseStatus || 0", timeout: .seconds(2))
        return r?["result"]?["value"]?.intValue ?? 0
    }

    /// Evaluates `expression` (promises awaited) and returns the CDP result object.
    func evaluate(_ expression: String, timeout: Duration) async throws(NodeError) -> JSONValue {
        let (pipe, s) = try await ensure()
        let ms = max(1, timeout.milliseconds)
        do {
            // Chromium stops the script itself at `timeout`; our own wait is a little longer.
            return try await pipe.call("Runtime.evaluate", ["expression": .string(expression), "returnByValue": true,
                                                            "awaitPromise": true, "userGesture": true,
                                                            "timeout": .number(Double(ms))],
                                       session: s, timeout: timeout + .seconds(2))
        } catch {
            // A script still running would block everything after it.
            _ = try? await pipe.call("Runtime.terminateExecution", session: s, timeout: .seconds(2))
            switch error.kind {
            case .protocolError: throw CanvasError.evalFailed(error.description)
            case .timeout: throw CanvasError.evalFailed("the script did not finish within \(timeout)")
            case .closed: throw CanvasError.unavailable("the canvas browser exited (\(error.description))")
            }
        }
    }

    /// The visible part of the page, in CSS pixels of the page (scroll offset included).
    struct Viewport: Sendable { let x, y, width, height: Double }

    /// Page.captureScreenshot of the viewport; `scale` < 1 shrinks it inside the browser.
    func screenshot(format: String, quality: Int?, scale: Double, viewport v: Viewport) async throws(NodeError) -> [UInt8] {
        let (pipe, s) = try await ensure()
        var p: [String: JSONValue] = ["format": .string(format), "fromSurface": true,
                                      "clip": ["x": .number(v.x), "y": .number(v.y), "width": .number(v.width),
                                               "height": .number(v.height), "scale": .number(scale)]]
        if let quality { p["quality"] = .number(Double(quality)) }
        do {
            let r = try await pipe.call("Page.captureScreenshot", .object(p), session: s, timeout: .seconds(15))
            guard let b64 = r["data"]?.stringValue, let data = Base64.decode(b64) else {
                throw CanvasError.unavailable("the browser returned no image")
            }
            return data
        } catch let e as CDPPipe.Failure {
            throw CanvasError.unavailable("snapshot failed: \(e)")
        } catch {
            throw error as? NodeError ?? CanvasError.unavailable("snapshot failed: \(error)")
        }
    }

    /// Window mode: shows (normal or fullscreen, at `bounds`) or minimizes the window. Headless: no-op.
    func setWindow(visible: Bool, bounds: (x: Int?, y: Int?, width: Int?, height: Int?)?) async throws(NodeError) {
        guard options.window else { return }
        let (pipe, _) = try await ensure()
        guard let windowId else { return }
        do {
            let pid = browser?.process.pid ?? 0
            if !visible {
                // Unmapped, not minimized: minimizing needs a window manager, which kiosks often lack.
                if X11WindowVisibility.set(visible: false, pid: pid, display: options.display) == 0 {
                    throw CanvasError.unavailable("no window of the browser (pid \(pid)) on \(options.display ?? "$DISPLAY")")
                }
                return
            }
            X11WindowVisibility.set(visible: true, pid: pid, display: options.display)
            if let b = bounds {
                // Leave fullscreen first: Chromium refuses bounds for a fullscreen window.
                _ = try await pipe.call("Browser.setWindowBounds", ["windowId": .number(Double(windowId)), "bounds": ["windowState": "normal"]])
                var r: [String: JSONValue] = [:]
                if let x = b.x { r["left"] = .number(Double(x)) }
                if let y = b.y { r["top"] = .number(Double(y)) }
                if let w = b.width { r["width"] = .number(Double(w)) }
                if let h = b.height { r["height"] = .number(Double(h)) }
                _ = try await pipe.call("Browser.setWindowBounds", ["windowId": .number(Double(windowId)), "bounds": .object(r)])
            } else {
                _ = try await pipe.call("Browser.setWindowBounds", ["windowId": .number(Double(windowId)), "bounds": ["windowState": "fullscreen"]])
            }
        } catch let e as NodeError {
            throw e
        } catch {
            throw CanvasError.unavailable("cannot change the canvas window: \(error)")
        }
    }

    func stop() async {
        if let b = browser { await Self.stopOffPool(b) }
        browser = nil
        session = nil
    }

    /// URLs in messages: data: URLs (the scaffold) are long and say nothing.
    static func display(_ url: String) -> String {
        url.hasPrefix("data:") ? "the built-in scaffold page" : url
    }
}
