import Config
import Kit
import Support

/// `openclaw-node mcp serve` and `mcp config`: where the calls go, what is offered, and the entry
/// an agent pastes.
enum McpServeCommand {
    /// `http`: serve streamable HTTP on this address instead of stdio.
    static func serve(_ context: BundleCLIContext, http: String?) async -> Int32 {
        let log = Logger(component: "mcp-serve")
        let settings = context.section.settings["serve"]
        let toolList = NodeToolList(include: settings?["include"]?.arrayValue?.compactMap(\.stringValue) ?? [],
                                    exclude: settings?["exclude"]?.arrayValue?.compactMap(\.stringValue) ?? [])
        // One dispatcher: the daemon's when one runs (its presence, its MCP servers, its approvals
        // prompts), else this process's own, built from the same config.
        let invoke: McpToolServer.Invoke
        let commands: McpToolServer.Rows
        let via: String
        if let daemon = context.daemon {
            invoke = { command, params in await daemon.invoke(command, params, nil) }
            // The daemon's table, which a reload changes; each command's row from its manifest.
            let local = context.commands
            commands = {
                guard let names = await daemon.commands() else { return local() }
                let catalog = BundleCatalog.current
                return names.compactMap { catalog.command($0) }
            }
            via = "the running openclaw-node daemon"
            log.info("calls go to the running daemon (its control socket)")
        } else {
            invoke = context.invoke
            let local = context.commands
            commands = { local() }
            via = "this openclaw-node process (no daemon runs for this config)"
            log.info("no daemon runs for this config, so the commands run in this process")
        }
        let offered = await commands().filter(toolList.offers).count
        if offered == 0 { log.warn("no command is offered as a tool (capabilities.mcp.serve and the enabled capabilities decide which)") }
        guard let http else {
            log.info("serving MCP on stdio")
            let server = McpToolServer(invoke: invoke, commands: commands, toolList: toolList, via: via, notifies: true, log: log)
            await McpStdioServe.run(server: server, log: log)
            return 0
        }
        let makeServer: @Sendable () -> McpToolServer = {
            McpToolServer(invoke: invoke, commands: commands, toolList: toolList, via: via, notifies: false, log: log)
        }
        let endpoint: HTTPEndpoint
        switch httpEndpoint(context, http) {
        case .failure(let why): context.printError("openclaw-node mcp serve: \(why)"); return why.usage ? 2 : 1
        case .success(let e): endpoint = e
        }
        var identity: (any TLSServerIdentity)?
        if let files = endpoint.tls {
            guard let tls = context.tls else { context.printError("openclaw-node mcp serve: TLS is not available in this process"); return 1 }
            do throws(TransportError) { identity = try tls.identity(certificateFile: files.certificate, keyFile: files.key) } catch {
                context.printError("openclaw-node mcp serve: \(error.description) (capabilities.mcp.serve.tls)")
                return 1
            }
        }
        return await McpHTTPServe.run(address: endpoint.address, token: endpoint.token, tls: identity, makeServer: makeServer, log: log)
    }

    /// Where `--http` serves: its address, the bearer token its clients must send (made on first
    /// use), and the certificate and key when it serves TLS.
    struct HTTPEndpoint {
        let address: McpHTTPServe.Address
        let token: String
        let tls: (certificate: String, key: String)?

        /// What an agent connects to (https with a certificate; an any-address listener by this machine's name).
        var url: String { address.url(tls: tls != nil) }
    }

    /// `--http`'s address and token, and `capabilities.mcp.serve.tls`: with a certificate and key,
    /// an address beyond loopback is taken (and every address serves TLS); without, it is refused.
    static func httpEndpoint(_ context: BundleCLIContext, _ http: String) -> Result<HTTPEndpoint, ServeFailure> {
        let tls = context.section.settings["serve"]?["tls"]
        let certificate = tls?["certificate"]?.stringValue, key = tls?["key"]?.stringValue
        let files: (certificate: String, key: String)?
        switch (certificate, key) {
        case (let c?, let k?): files = (c, k)
        case (nil, nil): files = nil
        default: return .failure(ServeFailure("capabilities.mcp.serve.tls needs both certificate and key (PEM files)", usage: true))
        }
        let network: LocalServerAddress.NetworkAddresses = files != nil ? .allowed :
            .refused("mcp serve speaks plain HTTP; to serve the network over TLS, set capabilities.mcp.serve.tls " +
                     "{ certificate, key } (PEM files), or reach it from elsewhere through an SSH tunnel")
        return McpHTTPServe.Address.parse(http, server: "mcp serve", network: network)
            .mapError { ServeFailure($0.description, usage: true) }
            .flatMap { address in
                ServeToken.load(stateDirectory: context.stateDirectory)
                    .map { HTTPEndpoint(address: address, token: $0, tls: files) }
                    .mapError { ServeFailure("the bearer token: \($0)") }
            }
    }

    /// The `mcpServers` entry: for stdio, the command that starts `serve` with this executable and
    /// config; for `--http`, the URL and the bearer token header (the token made now if need be).
    static func clientEntry(_ context: BundleCLIContext, configFile: String?, http: String?) -> Result<JSONValue, ServeFailure> {
        if let http {
            let endpoint: HTTPEndpoint
            switch httpEndpoint(context, http) {
            case .failure(let why): return .failure(why)
            case .success(let e): endpoint = e
            }
            var entry: [String: JSONValue] = ["type": "http", "url": .string(endpoint.url),
                                              "headers": ["Authorization": .string("Bearer " + endpoint.token)]]
            if case .unix(let path) = endpoint.address { entry["socketPath"] = .string(path) }
            return .success(["mcpServers": ["openclaw-node": .object(entry)]])
        }
        return .success(stdioEntry(configFile: configFile))
    }

    static func stdioEntry(configFile: String?) -> JSONValue {
        var args: [JSONValue] = ["mcp", "serve"]
        if let configFile {
            args += ["--config", .string(configFile.hasPrefix("/") ? configFile : PathName.join(FileSystem.currentDirectory, configFile))]
        }
        return ["mcpServers": ["openclaw-node": ["command": .string(executablePath()), "args": .array(args)]]]
    }

    /// The node's command by its full path (an agent starts it by that path): installed, /usr/bin/openclaw-node.
    static func executablePath() -> String { NodeExecutable.command ?? "openclaw-node" }
}

/// Why `mcp serve` cannot serve as asked (an address, the listener, the token), in words for the user.
struct ServeFailure: Error, CustomStringConvertible {
    let description: String
    /// The command line asked for something impossible (exit 2) rather than the system failing (1).
    let usage: Bool
    init(_ description: String, usage: Bool = false) { self.description = description; self.usage = usage }
}
