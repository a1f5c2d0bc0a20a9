import Kit
import Support

/// One configured MCP server kept running: started, initialized and its tools listed; on a crash
/// or a closed transport its tools are withdrawn and it is started again with backoff (1 s
/// doubling to 60 s; back to 1 s after a minute of good health); a tool-list change lists the
/// tools again. Stopped with the daemon. Calls never wait on the runner: a hanging tool holds
/// only its own call.
actor McpServerRunner {
    enum State: String, Sendable, CaseIterable { case idle, starting, ready, restarting, failed, stopped }

    let config: McpServerConfig
    private let context: CapabilityContext
    private let log: Logger
    private let changed: @Sendable () -> Void
    private(set) var state: State = .idle
    private(set) var why: String?
    private(set) var restarts = 0
    private(set) var serverInfo: String?
    private(set) var endpoint: String?
    /// All tools the server lists, and the ones offered (toolFilter).
    private(set) var listed: [McpTool] = []
    private var client: McpClient?
    private var attempt = 0
    private var readySince: ContinuousClock.Instant?
    private var restartTask: Task<Void, Never>?
    private var settledOnce = false
    private var settleWaiters: [CheckedContinuation<Void, Never>] = []

    init(config: McpServerConfig, context: CapabilityContext, changed: @escaping @Sendable () -> Void) {
        self.config = config; self.context = context; self.changed = changed
        log = Logger(component: "mcp \(config.name)")
    }

    var offered: [McpTool] { state == .ready ? listed.filter { config.offers($0.name) } : [] }

    /// Starts it unless it runs or is starting; returns once this attempt is over.
    func start() async {
        guard state == .idle || state == .failed || state == .restarting else { return }
        state = .starting
        let t = McpTransports.make(config, context: context, log: log)
        let c = McpClient(transport: t, log: log)
        client = c
        do {
            try await c.connect(timeout: config.connectionTimeout, onToolsChanged: { [weak self] in
                Task { await self?.refreshTools() }
            }, onClosed: { [weak self] why in
                Task { await self?.closed(c, why) }
            })
            let tools = try await c.listTools(timeout: config.connectionTimeout)
            guard client === c, state == .starting else { await c.close(); return }
            listed = tools
            serverInfo = await c.serverInfo
            endpoint = await t.endpoint
            state = .ready
            why = nil
            readySince = .now
            let version = await c.protocolVersion ?? "?"
            log.info("ready: \(serverInfo ?? "MCP server"), MCP \(version), \(tools.count) tools (\(offered.count) offered)")
            changed()
        } catch {
            await c.close()
            guard client === c, state == .starting else { return }
            client = nil
            fail(error.description)
        }
        settle()
    }

    /// For a call outside the daemon (`invoke --local`, the CLI without a daemon): start it now.
    func ensureStarted() async -> Bool {
        if state == .idle || state == .failed { await start() }
        return state == .ready
    }

    /// Waits until the first start attempt is over (ready or failed) or `timeout` passed.
    func settled(within timeout: Duration) async {
        guard !settledOnce else { return }
        let timer = Task { [weak self] in try? await Task.sleep(for: timeout); await self?.settle() }
        await withCheckedContinuation { settleWaiters.append($0) }
        timer.cancel()
    }

    func call(_ tool: String, arguments: JSONValue, timeout: Duration) async -> Result<JSONValue, NodeError> {
        guard state == .ready, let c = client else {
            return .failure(McpErrors.serverUnavailable(config.name))
        }
        guard offered.contains(where: { $0.name == tool }) else { return .failure(McpErrors.toolUnavailable(tool, server: config.name)) }
        do {
            return .success(CallResultBounds.bound(try await c.callTool(tool, arguments: arguments, timeout: min(timeout, config.timeout))))
        } catch {
            switch error {
            case .disconnected: return .failure(McpErrors.serverDisconnected(config.name))
            case .timeout(let text): return .failure(NodeError(McpErrors.toolTimeout, verbatim: McpErrors.redact(text)))
            case .server(let text): return .failure(NodeError(McpErrors.toolError, verbatim: McpErrors.redact(text)))
            }
        }
    }

    func stop() async {
        state = .stopped
        restartTask?.cancel()
        restartTask = nil
        let c = client
        client = nil
        await c?.close()
        settle()
    }

    private func refreshTools() async {
        guard state == .ready, let c = client else { return }
        do {
            let tools = try await c.listTools(timeout: config.connectionTimeout)
            guard client === c, tools != listed else { return }
            log.info("its tool list changed: \(tools.count) tools (was \(listed.count))")
            listed = tools
            changed()
        } catch {
            log.warn("listing its tools again failed: \(error.description)")
        }
    }

    private func closed(_ c: McpClient, _ why: String) async {
        guard client === c, state != .stopped else { return }
        client = nil
        let wasReady = state == .ready
        if let since = readySince, ContinuousClock.now - since > .seconds(60) { attempt = 0 }
        readySince = nil
        if wasReady { changed() }  // its tools are withdrawn until it is back
        if state == .starting { return }  // start() reports the failure itself
        fail(why)
    }

    private func fail(_ text: String) {
        why = text
        let delay = Duration.seconds(min(60, 1 << min(attempt, 6)))
        attempt += 1
        restarts += 1
        state = .restarting
        log.warn("\(text); starting it again in \(delay)")
        restartTask?.cancel()
        restartTask = Task { [weak self] in
            try? await Task.sleep(for: delay)
            guard !Task.isCancelled else { return }
            await self?.start()
        }
    }

    private func settle() {
        settledOnce = true
        let waiters = settleWaiters
        settleWaiters = []
        waiters.forEach { $0.resume() }
    }
}

/// The transport a server's config names.
enum McpTransports {
    static func make(_ config: McpServerConfig, context: CapabilityContext, log: Logger) -> any McpTransport {
        switch config.transport {
        case .stdio(let command, let args, let env, let cwd, let kind, let writable, let network):
            var sandbox = Sandbox()
            sandbox.kind = kind
            sandbox.writable = writable
            sandbox.network = network
            sandbox.hiddenDirectories = context.privateDirectories.map { PathName.resolvingSymlinks($0) }
            sandbox.hiddenFiles = context.privateFiles.map { PathName.resolvingSymlinks($0) }
            let home = context.environment["HOME"].flatMap { FileSystem.isDirectory($0) ? $0 : nil } ?? "/"
            return StdioTransport(config: config, command: command, args: args,
                                  env: StdioTransport.environment(base: context.environment, extra: env),
                                  cwd: cwd ?? home, sandbox: sandbox, log: log)
        case .http(let url, let headers, let caFile):
            // The settings checked the URL when they were read.
            return StreamableHTTPTransport(url: URLParts(string: url)!, headers: headers, caFile: caFile,
                                           streams: context.network, requestTimeout: config.timeout, log: log)
        }
    }
}
