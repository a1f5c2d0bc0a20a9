import Kit
import Support

/// `openclaw-node mcp list|call`: through the running daemon when there is one (its servers, its
/// published names), else in this process (servers started for the command and stopped after).
enum McpCLI {
    static func main(_ args: [String], _ context: BundleCLIContext) async -> Int32 {
        var rest = args
        let sub = rest.isEmpty ? "" : rest.removeFirst()
        var json = false, argsText = "{}", timeoutMs: Int?, configFile: String?, http: String?
        var positional: [String] = []
        var i = 0
        while i < rest.count {
            let a = rest[i]
            switch a {
            case "--json": json = true
            case "--config": i += 1; if i < rest.count { configFile = rest[i] }  // read by the core
            case "--args", "--timeout", "--http":
                guard i + 1 < rest.count else { context.printError("openclaw-node mcp: \(a) needs a value"); return 2 }
                i += 1
                if a == "--http" { http = rest[i] } else if a == "--args" { argsText = rest[i] } else {
                    guard let ms = Int(rest[i]), ms > 0 else { context.printError("openclaw-node mcp: --timeout is milliseconds (a positive integer)"); return 2 }
                    timeoutMs = ms
                }
            default:
                if a.hasPrefix("--config=") { configFile = String(a.dropFirst("--config=".count)); break }
                if a.hasPrefix("-") { context.printError("openclaw-node mcp: unknown option \(a) (see openclaw-node mcp --help)"); return 2 }
                positional.append(a)
            }
            i += 1
        }
        switch sub {
        case "list":
            let reply = await (context.daemon?.query ?? context.query)(["op": "list"])
            switch reply {
            case .failure(let e): context.printError("openclaw-node mcp list: \(e.message)"); return 1
            case .success(let v):
                if json { context.printLine(v.jsonString(pretty: true)) } else { printList(v, context, fromDaemon: context.daemon != nil) }
                return 0
            }
        case "call":
            guard positional.count == 2 else { context.printError("Usage: openclaw-node mcp call SERVER TOOL [--args JSON] [--timeout MS]"); return 2 }
            guard let arguments = JSONValue.parse(argsText), arguments.objectValue != nil else {
                context.printError("openclaw-node mcp call: --args must be a JSON object, such as '{\"path\": \"README.md\"}'"); return 2
            }
            let params: JSONValue = ["server": .string(positional[0]), "tool": .string(positional[1]), "arguments": arguments]
            let result: Result<JSONValue, NodeError>
            if let daemon = context.daemon { result = await daemon.invoke(McpCommand.call.rawValue, params, timeoutMs) }
            else { result = await context.invoke(McpCommand.call.rawValue, params) }
            switch result {
            case .success(let v):
                context.printLine(v.jsonString(pretty: true))
                return v["isError"]?.boolValue == true ? 1 : 0
            case .failure(let e):
                context.printError("\(e.code): \(e.message)")
                return 1
            }
        case "serve":
            return await McpServeCommand.serve(context, http: http)
        case "config":
            switch McpServeCommand.clientEntry(context, configFile: configFile, http: http) {
            case .success(let entry): context.printLine(entry.jsonString(pretty: true)); return 0
            case .failure(let why): context.printError("openclaw-node mcp config: \(why)"); return 1
            }
        default:
            context.printError("openclaw-node mcp: unknown subcommand \"\(sub)\"; use list, call, serve or config (see openclaw-node mcp --help)")
            return 2
        }
    }

    static func printList(_ v: JSONValue, _ context: BundleCLIContext, fromDaemon: Bool) {
        let servers = v["servers"]?.arrayValue ?? []
        if servers.isEmpty { context.printLine("No MCP servers configured (capabilities.mcp.servers in the config)."); return }
        for s in servers {
            let name = s["name"]?.stringValue ?? "?", state = s["state"]?.stringValue ?? "?"
            var head = "\(name): \(state)"
            if let t = s["transport"]?.stringValue { head += ", \(t)" }
            if let e = s["endpoint"]?.stringValue { head += " (\(e))" }
            if let info = s["serverInfo"]?.stringValue, !info.isEmpty { head += " — \(info)" }
            if let r = s["restarts"]?.intValue, r > 0 { head += ", \(r) restart\(r == 1 ? "" : "s")" }
            context.printLine(head)
            if let why = s["why"]?.stringValue { context.printLine("  why: \(why)") }
            for t in s["tools"]?.arrayValue ?? [] {
                let tool = t["tool"]?.stringValue ?? "?"
                if let published = t["publishedAs"]?.stringValue { context.printLine("  \(tool) → \(published)") }
                else { context.printLine("  \(tool)\(t["offered"]?.boolValue == false ? " (not offered: toolFilter)" : fromDaemon ? " (not published)" : "")") }
            }
        }
        if fromDaemon, let p = v["publication"] {
            let supports = p["gatewaySupportsTools"]?.boolValue ?? true
            context.printLine(supports ? "Published to the gateway: \(p["published"]?.intValue ?? 0) tool(s)."
                                       : "The gateway does not take node tools (an older gateway); none published.")
        }
    }
}
