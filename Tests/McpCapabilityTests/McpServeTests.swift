import Foundation
@testable import Support
@testable import TestSupport
import Testing

/// `openclaw-node mcp serve`: the node as an MCP server, driven by the mcp SDK's own client from
/// PyPI (Tests/mcp/node_mcp_client.py) over stdio, through the running daemon and without one.
/// The commands are real: the screen of an Xvfb, system.run under the exec approvals.
@Suite(.serialized) struct McpServeTests {
    static var client: String { TestPaths.repoRoot + "/Tests/mcp/node_mcp_client.py" }

    /// The node's config: screen on `display`, system.run with rm on the denylist, and what
    /// `mcp serve` offers.
    static func node(display: String, include: String = "['device.*', 'screen.snapshot', 'system.run']") -> NodeUnderTest {
        NodeUnderTest(gatewayURL: "ws://127.0.0.1:9", extra: """
            capabilities: { screen: { enabled: true, backend: 'x11', display: '\(display)' },
                            system: { enabled: true, denylist: ['/usr/bin/rm', '/bin/rm'] },
                            mcp: { serve: { include: \(include) } } },
            """)
    }

    /// Runs the SDK client through `steps`; one JSON object per step (the first is initialize).
    /// `extra`: the client's --http/--token/--uds options (streamable HTTP instead of stdio).
    static func session(_ node: NodeUnderTest, _ steps: [JSONValue], extra: [String] = []) throws -> [JSONValue] {
        let python = McpServersTests.python
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw TestFailure("no MCP test environment at \(McpServersTests.venv): run scripts/mcp-venv (scripts/test does)")
        }
        let r = try runProcess(python, [client, TestPaths.nodeBinary, node.configPath, JSONValue.array(steps).jsonString()] + extra,
                               env: node.env, timeout: 120)
        let out = r.stdout.split(separator: "\n").compactMap { JSONValue.parse(String($0)) }
        guard r.code == 0, out.count == steps.count + 1 else {
            throw TestFailure("the MCP client ended with \(r.code) after \(out.count) of \(steps.count + 1) steps:\n\(r.stdout)\n\(r.stderr.suffix(4000))")
        }
        return out
    }

    static func text(_ step: JSONValue) -> String {
        (step["content"]?.arrayValue ?? []).compactMap { $0["text"]?.stringValue }.joined(separator: "\n")
    }

    @Test func anAgentUsesTheNodeThroughTheDaemon() throws {
        let x = try Xvfb(screens: ["320x240x24"])
        defer { x.stop() }
        let node = Self.node(display: x.display)
        defer { node.cleanup() }
        try node.start()
        #expect(waitUntil(timeout: 20) { FileManager.default.fileExists(atPath: node.dir + "/state/control.sock") }, "\(node.log)")
        let victim = node.dir + "/keep-me"
        _ = FileManager.default.createFile(atPath: victim, contents: Data("x".utf8))

        let steps: [JSONValue] = [
            ["do": "list"],
            ["do": "call", "tool": "device.info"],
            ["do": "call", "tool": "screen.snapshot", "arguments": ["maxWidth": 160]],
            ["do": "call", "tool": "screen.snapshot", "arguments": ["maxWidth": 99999]],
            ["do": "call", "tool": "system.run", "arguments": ["command": ["/bin/echo", "from an agent"]]],
            ["do": "call", "tool": "system.run", "arguments": ["command": ["/usr/bin/rm", .string(victim)]]],
            // The SDK gives up after 1.5 s and sends notifications/cancelled: the sleep must end.
            ["do": "call", "tool": "system.run", "arguments": ["command": ["/bin/sleep", "41.5"]], "timeout": 1.5,
             "waitGone": "/bin/sleep 41.5"],
            ["do": "call", "tool": "camera.snap"],
        ]
        let s = try Self.session(node, steps)
        #expect(s[0]["protocolVersion"] == "2025-11-25" && s[0]["server"] == "openclaw-node", "\(s[0])")
        #expect(s[0]["instructions"]?.stringValue?.contains("running openclaw-node daemon") == true, "\(s[0])")

        // The tools: what `include` names and the node advertises; no dangerous command unnamed.
        let tools = try #require(s[1]["tools"]?.objectValue)
        #expect(Set(tools.keys) == ["device.info", "device.status", "screen.snapshot", "system.run"], "\(tools.keys.sorted())")
        // Each schema is the manifest's, as `caps COMMAND --json` prints it.
        for name in ["screen.snapshot", "system.run"] {
            let caps = try node.cli(["caps", name, "--json"])
            let printed = try #require(JSONValue.parse(caps.stdout), "\(caps.stdout)\(caps.stderr)")
            #expect(tools[name]?["inputSchema"] == (printed["paramsSchema"] ?? printed), "\(name): \(tools[name] ?? .null)\n\(printed)")
        }

        #expect(s[2]["isError"] == false && s[2]["structured"]?["systemName"]?.stringValue?.isEmpty == false, "\(s[2])")

        // An image block an agent can decode, of the size asked for (320 px wide scaled to 160).
        let image = try #require(s[3]["content"]?.arrayValue?.first { $0["type"] == "image" }, "\(s[3])")
        #expect(image["width"] == 160 && image["height"] == 120, "\(image)")
        #expect(["image/png", "image/jpeg"].contains(image["mimeType"]?.stringValue ?? ""), "\(image)")
        #expect(s[3]["structured"]?["width"] == 160 && s[3]["structured"]?["base64"] == nil, "\(s[3])")

        // Bad params: refused by the node's check, before the handler, as a tool error.
        #expect(s[4]["isError"] == true && Self.text(s[4]).contains("INVALID_REQUEST: maxWidth must be between 16 and"), "\(s[4])")

        #expect(s[5]["isError"] == false && s[5]["structured"]?["stdout"] == "from an agent\n", "\(s[5])")

        // The denylist holds through MCP, and the refusal says how a person approves.
        #expect(s[6]["isError"] == true && Self.text(s[6]).contains("SYSTEM_RUN_DENIED"), "\(s[6])")
        #expect(Self.text(s[6]).contains("openclaw-node approvals"), "\(s[6])")
        #expect(FileManager.default.fileExists(atPath: victim))

        #expect(s[7]["exception"] != nil, "\(s[7])")
        #expect(s[7]["stillRunning"] == false, "the cancelled sleep still runs: \(s[7])\n\(node.log.suffix(2000))")
        #expect(node.log.contains("CANCELLED"), "\(node.log.suffix(2000))")

        // A dangerous command include does not name is no tool at all.
        #expect(s[8]["exception"]?.stringValue?.contains("unknown tool: camera.snap") == true, "\(s[8])")

        // Nobody at the device: a foreground command is refused as over a gateway.
        let bg = try node.cli(["presence", "background"])
        #expect(bg.code == 0, "\(bg.stdout)\(bg.stderr)")
        let later = try Self.session(node, [["do": "call", "tool": "screen.snapshot"]])
        #expect(later[1]["isError"] == true && Self.text(later[1]).contains("NODE_BACKGROUND_UNAVAILABLE"), "\(later[1])")
        #expect(node.stop() == 0)
    }

    /// The tools follow the daemon's table: a reload that turns a capability off sends
    /// notifications/tools/list_changed, and the next list no longer has its commands.
    @Test func theToolsFollowTheDaemonsCapabilities() throws {
        let node = Self.node(display: ":0", include: "['device.*', 'system.run']")
        defer { node.cleanup() }
        try node.start()
        #expect(waitUntil(timeout: 20) { FileManager.default.fileExists(atPath: node.dir + "/state/control.sock") }, "\(node.log)")
        let pid = try #require(node.process?.pid)
        let text = try String(contentsOfFile: node.configPath, encoding: .utf8)
        let without = node.dir + "/without-system.json5"
        try text.replacingOccurrences(of: "system: { enabled: true", with: "system: { enabled: false").write(toFile: without, atomically: true, encoding: .utf8)
        let s = try Self.session(node, [
            ["do": "list"],
            ["do": "run", "argv": ["/bin/sh", "-c", .string("cp '\(without)' '\(node.configPath)' && kill -HUP \(pid)")]],
            ["do": "waitListChanged", "timeout": 30],
            ["do": "list"],
        ])
        #expect(s[1]["tools"]?["system.run"] != nil, "\(s[1])")
        #expect(s[2]["code"] == 0)
        #expect(s[3]["changed"] == true, "\(node.log.suffix(2000))")
        #expect(s[4]["tools"]?["system.run"] == nil && s[4]["tools"]?["device.info"] != nil, "\(s[4])")
    }

    /// location.get from a real gpsd (fed NMEA by the test): offered with no include (a gateway
    /// allows it unasked), and the fix arrives as structured content.
    @Test(.enabled(if: GpsdHarness.available, "needs gpsd"))
    func locationComesFromGpsd() throws {
        let h = try GpsdHarness(fix: ["lat": 52.5216, "lon": 13.4066, "alt": 34.0, "hdop": 0.9]); defer { h.stop() }
        let node = NodeUnderTest(gatewayURL: "ws://127.0.0.1:9", extra: "capabilities: { location: { enabled: true, gpsd: '127.0.0.1:\(h.port)' } },")
        defer { node.cleanup() }
        let s = try Self.session(node, [["do": "list"], ["do": "call", "tool": "location.get", "arguments": ["timeoutMs": 10000]]])
        #expect(s[1]["tools"]?["location.get"] != nil && s[1]["tools"]?["system.run"] == nil, "\(s[1])")
        let fix = try #require(s[2]["structured"], "\(s[2])")
        #expect(abs((fix["lat"]?.doubleValue ?? 0) - 52.5216) < 1e-4 && abs((fix["lon"]?.doubleValue ?? 0) - 13.4066) < 1e-4, "\(fix)")
    }

    @Test func withoutADaemonTheCommandsRunInTheServe() throws {
        let x = try Xvfb(screens: ["320x240x24"])
        defer { x.stop() }
        let node = Self.node(display: x.display, include: "['device.info', 'system.run']")
        defer { node.cleanup() }
        let s = try Self.session(node, [
            ["do": "list"],
            ["do": "call", "tool": "system.run", "arguments": ["command": ["/bin/echo", "no daemon"]]],
            ["do": "call", "tool": "system.run", "arguments": ["command": ["/bin/sleep", "42.5"]], "timeout": 1.5,
             "waitGone": "/bin/sleep 42.5"],
        ])
        #expect(s[0]["instructions"]?.stringValue?.contains("no daemon runs") == true, "\(s[0])")
        #expect(Set(s[1]["tools"]?.objectValue.map { Array($0.keys) } ?? []) == ["device.info", "system.run"], "\(s[1])")
        #expect(s[2]["structured"]?["stdout"] == "no daemon\n", "\(s[2])")
        #expect(s[3]["stillRunning"] == false, "\(s[3])")
    }

    /// `mcp config` prints the entry an agent pastes: this executable, `mcp serve` and the config.
    @Test func configPrintsTheEntryToPaste() throws {
        let node = Self.node(display: ":0")
        defer { node.cleanup() }
        let r = try node.cli(["mcp", "config"])
        #expect(r.code == 0, "\(r.stderr)")
        let entry = try #require(JSONValue.parse(r.stdout)?["mcpServers"]?["openclaw-node"], "\(r.stdout)")
        #expect(entry["command"]?.stringValue.map { PathName.resolvingSymlinks($0) } == PathName.resolvingSymlinks(TestPaths.nodeBinary), "\(entry)")
        #expect(entry["args"] == ["mcp", "serve", "--config", .string(node.configPath)], "\(entry)")
    }

    /// `mcp serve --http`: the SDK's streamable-HTTP client with the token `mcp config --http`
    /// prints, on a loopback port and on a Unix socket; a missing or wrong token, a web page's
    /// Origin and another account are refused.
    @Test func overHTTPOnlyWithTheTokenAndNotFromWebPagesOrOtherAccounts() throws {
        let node = Self.node(display: ":0", include: "['device.info', 'system.run']")
        defer { node.cleanup() }
        let port = try freeLoopbackPort()
        let address = "127.0.0.1:\(port)"
        let entry = try #require(JSONValue.parse(try node.cli(["mcp", "config", "--http", address]).stdout)?["mcpServers"]?["openclaw-node"])
        #expect(entry["url"] == .string("http://\(address)/mcp") && entry["type"] == "http", "\(entry)")
        let header = try #require(entry["headers"]?["Authorization"]?.stringValue)
        let token = String(header.dropFirst("Bearer ".count))
        #expect(token.count == 64)
        let tokenFile = node.dir + "/state/mcp/serve-token"
        #expect(PathName.permissions(tokenFile) == 0o600, "\(String(PathName.permissions(tokenFile) ?? 0, radix: 8))")

        let serve = try BackgroundProcess(TestPaths.nodeBinary, ["mcp", "serve", "--http", address, "--config", node.configPath], env: node.env)
        defer { _ = serve.stop() }
        #expect(waitUntil(timeout: 20) { serve.log.contains("serving MCP on http") }, "\(serve.log)")
        let steps: [JSONValue] = [
            ["do": "list"],
            ["do": "call", "tool": "system.run", "arguments": ["command": ["/bin/echo", "over http"]]],
            ["do": "call", "tool": "system.run", "arguments": ["command": ["/bin/sleep", "43.5"]], "timeout": 1.5, "waitGone": "/bin/sleep 43.5"],
        ]
        let s = try Self.session(node, steps, extra: ["--http", "http://\(address)/mcp", "--token", token])
        #expect(Set(s[1]["tools"]?.objectValue.map { Array($0.keys) } ?? []) == ["device.info", "system.run"], "\(s[1])")
        #expect(s[2]["structured"]?["stdout"] == "over http\n", "\(s[2])")
        #expect(s[3]["stillRunning"] == false, "\(s[3])\n\(serve.log.suffix(2000))")

        // Refused: a wrong token (the SDK's client fails), none, and a web page's Origin.
        #expect(throws: TestFailure.self) { try Self.session(node, [["do": "list"]], extra: ["--http", "http://\(address)/mcp", "--token", String(repeating: "0", count: 64)]) }
        let initialize = #"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}"#
        func curl(_ headers: [String]) throws -> String {
            try runProcess("/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", "http://\(address)/mcp",
                                             "-H", "Content-Type: application/json", "--data", initialize] + headers.flatMap { ["-H", $0] }).stdout
        }
        #expect(try curl([]) == "401")
        #expect(try curl(["Authorization: Bearer \(token)", "Origin: http://evil.example"]) == "403")
        #expect(try curl(["Authorization: Bearer \(token)", "Origin: http://localhost:3000"]) == "200")
        #expect(try curl(["Authorization: Bearer \(token)"]) == "200")
        #expect(serve.log.contains("refused a request from the web origin http://evil.example"), "\(serve.log)")
        // 40 connections that send nothing (another account could open them without the token)
        // do not lock the agent out: the idle ones make room.
        var held: [Int32] = []
        defer { for fd in held { close(fd) } }
        for _ in 0..<40 {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var addr = sockaddr_in()
            addr.sin_family = sa_family_t(AF_INET)
            addr.sin_addr.s_addr = inet_addr("127.0.0.1")
            addr.sin_port = in_port_t(UInt16(port).bigEndian)
            let rc = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
            #expect(rc == 0)
            held.append(fd)
        }
        let despite = try Self.session(node, [["do": "call", "tool": "device.info"]], extra: ["--http", "http://\(address)/mcp", "--token", token])
        #expect(despite[1]["structured"]?["systemName"] != nil, "\(despite[1])\n\(serve.log.suffix(1500))")
        #expect(serve.log.contains("dropped the one idle longest"), "\(serve.log.suffix(1500))")
        _ = serve.stop()

        // A Unix socket: 0600, so another account cannot even connect.
        let socketPath = node.dir + "/mcp.sock"
        let onSocket = try BackgroundProcess(TestPaths.nodeBinary, ["mcp", "serve", "--http", "unix:" + socketPath, "--config", node.configPath], env: node.env)
        defer { _ = onSocket.stop() }
        #expect(waitUntil(timeout: 20) { onSocket.log.contains("serving MCP on http") }, "\(onSocket.log)")
        #expect(PathName.permissions(socketPath) == 0o600)
        let viaSocket = try Self.session(node, [["do": "call", "tool": "device.info"]],
                                         extra: ["--http", "http://localhost/mcp", "--token", token, "--uds", socketPath])
        #expect(viaSocket[1]["structured"]?["systemName"] != nil, "\(viaSocket[1])")
        // The directory is opened up so only the socket's own mode keeps another account out.
        chmod(node.dir, 0o755)
        let stranger = try runProcess("/usr/bin/setpriv", ["--reuid", "65534", "--regid", "65534", "--clear-groups", "/usr/bin/python3", "-c",
            "import socket,sys\ns=socket.socket(socket.AF_UNIX)\ntry:\n s.connect(sys.argv[1]); print('connected')\nexcept OSError as e:\n print(e.errno)", socketPath])
        #expect(stranger.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "\(EACCES)", "\(stranger.stdout)\(stranger.stderr)")
    }
}
