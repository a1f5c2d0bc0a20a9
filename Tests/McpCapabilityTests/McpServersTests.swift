import Foundation
@testable import Support
@testable import TestSupport
import Testing

/// Real MCP servers from PyPI (the `mcp` SDK's own server machinery in Tests/mcp/test_mcp_server.py,
/// and the published mcp-server-time and mcp-server-git) through the real daemon and the test
/// gateway: what is published, calls, tool errors, a crash and restart, a list change, a hanging
/// tool cancelled, an oversized result cut (the attacks on servers: TrustBoundary/McpServerAttackTests).
@Suite(.serialized) struct McpServersTests {
    static var venv: String {
        ProcessInfo.processInfo.environment["OPENCLAW_TEST_MCP_VENV"]
            ?? (ProcessInfo.processInfo.environment["HOME"] ?? "/root") + "/.cache/openclaw-node/mcp-venv"
    }
    static var python: String { venv + "/bin/python" }
    static var script: String { TestPaths.repoRoot + "/Tests/mcp/test_mcp_server.py" }

    struct Rig {
        let gw: TestGateway
        let node: NodeUnderTest
        let dir: String
        func cleanup() { node.cleanup(); gw.stop(); try? FileManager.default.removeItem(atPath: dir) }
        func call(_ server: String, _ tool: String, _ arguments: String = "{}", timeoutMs: Int? = nil, wait: TimeInterval = 30) -> JSONValue? {
            gw.invoke("mcp.tools.call.v1", paramsJSON: "{\"server\":\"\(server)\",\"tool\":\"\(tool)\",\"arguments\":\(arguments)}",
                      timeoutMs: timeoutMs, wait: wait)
        }
        /// The next catalogue the gateway received that satisfies `predicate`.
        func catalogue(timeout: TimeInterval = 40, where predicate: @escaping ([String]) -> Bool) -> [String]? {
            gw.waitFor("plugin_tools", timeout: timeout) { predicate(Self.names($0)) }.map(Self.names)
        }
        static func names(_ e: JSONValue) -> [String] { e["tools"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? [] }
    }

    /// `servers`: the inside of `servers: { … }`.
    static func rig(servers: (String) -> String, gatewayArgs: [String] = [], nodeEnv: [String: String] = [:], nodeExtra: String = "") throws -> Rig {
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw TestFailure("no MCP test environment at \(venv): run scripts/mcp-venv (scripts/test does)")
        }
        let dir = TestPaths.tempDir("mcp")
        let gw = try TestGateway(stateFile: dir + "/gw.json", args: ["--auto-approve"] + gatewayArgs)
        let node = NodeUnderTest(gatewayURL: gw.url, extra: "capabilities: { mcp: { servers: { \(servers(dir)) } } }, \(nodeExtra)")
        node.extraEnv = nodeEnv
        try node.start()
        guard gw.waitFor("hello") != nil else { node.cleanup(); gw.stop(); throw TestFailure("no hello: \(node.log)") }
        return Rig(gw: gw, node: node, dir: dir)
    }

    static func testServer(_ name: String, marker: String? = nil, extra: String = "") -> String {
        "\(name): { command: '\(python)', args: ['\(script)'\(marker.map { ", '--marker', '\($0)'" } ?? "")], \(extra) },"
    }

    @Test func publishedToolsAreCallableWithResultsAndToolErrors() throws {
        let repo = TestPaths.tempDir("mcp-repo")
        defer { try? FileManager.default.removeItem(atPath: repo) }
        _ = try runProcess("/usr/bin/git", ["-C", repo, "init", "-q", "-b", "main"])
        let r = try Self.rig { _ in
            Self.testServer("t")
                + "time: { command: '\(Self.venv)/bin/mcp-server-time', args: ['--local-timezone', 'UTC'] },"
                + "git: { command: '\(Self.venv)/bin/mcp-server-git', args: ['--repository', '\(repo)'], toolFilter: { include: ['git_status', 'git_log'] } },"
        }
        defer { r.cleanup() }
        let names = try #require(r.catalogue { $0.contains("t_echo") && $0.contains("time_get_current_time") && $0.contains("git_git_status") },
                                 "\(r.node.log.suffix(4000))")
        // toolFilter: only the two git tools asked for; every name as the gateway accepts it.
        #expect(names.filter { $0.hasPrefix("git_") }.sorted() == ["git_git_log", "git_git_status"], "\(names)")
                #expect(r.gw.schemaErrors.isEmpty, "\(r.gw.schemaErrors)")

        let echo = try #require(r.call("t", "echo", #"{"text":"hello from the gateway"}"#), "\(r.node.log.suffix(3000))")
        #expect(echo["ok"] == true, "\(echo)")
        #expect(echo["payload"]?.firstText == "hello from the gateway", "\(echo)")
        // Upstream's contract: the CallToolResult as a structured payload, never payloadJSON text.
        #expect(echo["payloadField"] == "payload", "\(echo)")
        #expect(echo["payload"]?["isError"] == nil)

        let failed = try #require(r.call("t", "fail", #"{"message":"the disk is on fire"}"#))
        #expect(failed["ok"] == true && failed["payload"]?["isError"] == true, "\(failed)")
        #expect(failed["payload"]?.firstText?.stringValue?.contains("the disk is on fire") == true)

        let time = try #require(r.call("time", "get_current_time", #"{"timezone":"UTC"}"#))
        #expect(time["ok"] == true && time["payload"]?.jsonString().contains("UTC") == true, "\(time)")
        let status = try #require(r.call("git", "git_status", "{\"repo_path\":\"\(repo)\"}"))
        #expect(status["ok"] == true && status["payload"]?.jsonString().contains("main") == true, "\(status)")

        // Upstream's codes and messages for what is not there.
        let noTool = try #require(r.call("git", "git_commit", "{}"))
        #expect(noTool["error"]?["code"] == "MCP_TOOL_UNAVAILABLE" && noTool["error"]?["message"] == "MCP tool \"git_commit\" is unavailable on server \"git\"", "\(noTool)")
        let noServer = try #require(r.call("nope", "x"))
        #expect(noServer["error"]?["code"] == "MCP_SERVER_UNAVAILABLE" && noServer["error"]?["message"] == "MCP server \"nope\" is unavailable")
        let bad = try #require(r.gw.invoke("mcp.tools.call.v1", paramsJSON: #"{"server":"t","tool":"echo","arguments":[1]}"#))
        #expect(bad["error"]?["message"]?.stringValue == "INVALID_REQUEST: MCP tool arguments must be an object", "\(bad)")
        #expect(r.gw.schemaErrors.isEmpty, "\(r.gw.schemaErrors)")
    }

    @Test func streamableHTTPServerIsPublishedAndCalled() throws {
        let port = try freeLoopbackPort()
        let server = try BackgroundProcess(Self.python, [Self.script, "--transport", "streamable-http", "--port", String(port)])
        defer { server.stop() }
        #expect(waitUntil(timeout: 20) { (try? TCPSocket.connect(TCPSocket.resolve(host: "127.0.0.1", port: port), timeout: .seconds(1)))?.close() != nil }, "\(server.log)")
        let r = try Self.rig { _ in "web: { url: 'http://127.0.0.1:\(port)/mcp', transport: 'streamable-http', headers: { 'X-Test': '${HOME}' } }," }
        defer { r.cleanup() }
        #expect(r.catalogue { $0.contains("web_echo") } != nil, "\(r.node.log.suffix(4000))")
        let echo = try #require(r.call("web", "echo", #"{"text":"over HTTP"}"#))
        #expect(echo["payload"]?.firstText == "over HTTP", "\(echo) \(r.node.log.suffix(3000))")
        // An answer larger than 1 MiB of text comes back cut, with upstream's marker.
        let big = try #require(r.call("web", "big", #"{"size":3000000}"#))
        let text = big["payload"]?.firstText?.stringValue ?? ""
        #expect(text.hasSuffix("\n[truncated: MCP text content exceeded 1 MB]") && text.utf8.count <= 1 << 20, "\(text.utf8.count)")
        // A list change announced on the server's stream is republished.
        _ = r.call("web", "grow", #"{"name":"added_tool"}"#)
        #expect(r.catalogue { $0.contains("web_added_tool") } != nil, "\(r.node.log.suffix(3000))")
    }

    @Test func aCrashedServerIsWithdrawnRestartedAndRepublished() throws {
        let metricsPort = try freeLoopbackPort()
        let r = try Self.rig(servers: { _ in Self.testServer("t") }, nodeExtra: "metrics: { listen: '127.0.0.1:\(metricsPort)' },")
        defer { r.cleanup() }
        #expect(r.catalogue { $0.contains("t_echo") } != nil, "\(r.node.log.suffix(3000))")
        let crash = try #require(r.call("t", "crash"))
        #expect(crash["error"]?["code"] == "MCP_SERVER_UNAVAILABLE", "\(crash)")
        // Its tools leave the catalogue while it is down, and come back once it runs again.
        #expect(r.catalogue { !$0.contains("t_echo") } != nil, "\(r.node.log.suffix(3000))")
        #expect(r.catalogue { $0.contains("t_echo") } != nil, "\(r.node.log.suffix(3000))")
        #expect(r.node.log.contains("crashing on request"), "its stderr goes to the log")
        let again = try #require(r.call("t", "echo", #"{"text":"back"}"#))
        #expect(again["payload"]?.firstText == "back", "\(again)")
        // The metrics endpoint says it: running again, after one restart.
        let metrics = try httpGet(port: metricsPort, path: "/metrics").body
        #expect(metrics.contains("openclaw_node_mcp_servers{state=\"ready\"} 1\n"), "\(metrics)")
        #expect(metrics.contains("openclaw_node_mcp_server_restarts_total{server=\"t\"} 1\n"), "\(metrics)")
        #expect(metrics.contains("openclaw_node_mcp_tools_published "), "\(metrics)")
        // A tool-list change is republished; nothing unchanged is sent again.
        _ = r.call("t", "grow", #"{"name":"late"}"#)
        #expect(r.catalogue { $0.contains("t_late") } != nil)
        let count = r.gw.all("plugin_tools").count
        _ = r.call("t", "echo", #"{"text":"no change"}"#)
        Thread.sleep(forTimeInterval: 1.5)
        #expect(r.gw.all("plugin_tools").count == count)
    }

    @Test func aHangingToolIsCancelledOnTheServer() throws {
        let marker = TestPaths.tempDir("mcp-marker") + "/cancelled"
        let r = try Self.rig { _ in Self.testServer("t", marker: marker) }
        defer { r.cleanup() }
        #expect(r.catalogue { $0.contains("t_slow") } != nil)
        // The invoke's timeoutMs bounds the call: it ends just before it with upstream's
        // MCP_TOOL_TIMEOUT (the gateway is still waiting), and the server is told
        // (notifications/cancelled) and stops the work.
        r.gw.command(["cmd": "invoke", "id": "times-out", "command": "mcp.tools.call.v1",
                      "paramsJSON": #"{"server":"t","tool":"slow","arguments":{"seconds":60}}"#, "timeoutMs": 1500])
        let timedOut = r.gw.waitFor("invoke_result", timeout: 10) { $0["id"] == "times-out" }
        #expect(timedOut?["error"]?["code"] == "MCP_TOOL_TIMEOUT", "\(String(describing: timedOut)) \(r.node.log.suffix(2000))")
        #expect(waitUntil(timeout: 10) { FileManager.default.fileExists(atPath: marker) }, "\(r.node.log.suffix(3000))")
        try? FileManager.default.removeItem(atPath: marker)
        // A cancel from the gateway does the same, and the daemon goes on serving.
        let id = "cancel-me"
        try? FileManager.default.removeItem(atPath: marker + ".started")
        r.gw.command(["cmd": "invoke", "id": .string(id), "command": "mcp.tools.call.v1",
                      "paramsJSON": #"{"server":"t","tool":"slow","arguments":{"seconds":60}}"#, "timeoutMs": 60000])
        // Cancelled once the server is running the tool (it says so with a file).
        #expect(waitUntil(timeout: 20) { FileManager.default.fileExists(atPath: marker + ".started") }, "\(r.node.log.suffix(3000))")
        r.gw.command(["cmd": "cancel", "id": .string(id)])
        #expect(waitUntil(timeout: 10) { FileManager.default.fileExists(atPath: marker) }, "\(r.node.log.suffix(3000))")
        let echo = try #require(r.call("t", "echo", #"{"text":"still here"}"#))
        #expect(echo["payload"]?.firstText == "still here")
    }

    @Test func aFloodingServerDoesNotStallTheDaemon() throws {
        let r = try Self.rig { _ in Self.testServer("t") + Self.testServer("calm") }
        defer { r.cleanup() }
        #expect(r.catalogue { $0.contains("t_flood") && $0.contains("calm_echo") } != nil)
        let id = "flood"
        r.gw.command(["cmd": "invoke", "id": .string(id), "command": "mcp.tools.call.v1", "timeoutMs": 120000,
                      "paramsJSON": #"{"server":"t","tool":"flood","arguments":{"count":20000}}"#])
        // While it floods, the daemon answers other calls and other servers.
        for _ in 0..<5 {
            let info = try #require(r.gw.invoke("device.info", wait: 10), "\(r.node.log.suffix(2000))")
            #expect(info["ok"] == true)
            let echo = try #require(r.call("calm", "echo", #"{"text":"calm"}"#, wait: 10))
            #expect(echo["payload"]?.firstText == "calm")
        }
        let flood = try #require(r.gw.waitFor("invoke_result", timeout: 120) { $0["id"]?.stringValue == id }, "\(r.node.log.suffix(2000))")
        #expect(flood["payload"]?.firstText == "flooded", "\(flood)")
        #expect(r.node.log.contains("dropped") && r.node.log.contains("notifications"), "\(r.node.log.suffix(2000))")
    }

    @Test func anOlderGatewayIsNotAskedAgain() throws {
        let r = try Self.rig(servers: { _ in Self.testServer("t") }, gatewayArgs: ["--plugin-tools-unknown"])
        defer { r.cleanup() }
        #expect(r.gw.waitFor("plugin_tools_refused", timeout: 40) != nil, "\(r.node.log.suffix(3000))")
        _ = r.call("t", "grow", #"{"name":"late"}"#)
        // mcp.tools.call.v1 still works, but the catalogue is not offered again on this connection.
        let echo = try #require(r.call("t", "echo", #"{"text":"x"}"#))
        #expect(echo["payload"]?.firstText == "x")
        Thread.sleep(forTimeInterval: 1.5)
        #expect(r.gw.all("plugin_tools_refused").count == 1)
        #expect(r.node.log.contains("the gateway does not take node tools"))
    }

    @Test func cliListsAndCallsThroughTheDaemon() throws {
        let r = try Self.rig { _ in Self.testServer("t") + "off: { command: 'true', enabled: false }," }
        defer { r.cleanup() }
        #expect(r.catalogue { $0.contains("t_echo") } != nil)
        let list = try r.node.cli(["mcp", "list"])
        #expect(list.code == 0 && list.stdout.contains("t: ready, stdio") && list.stdout.contains("echo → t_echo"), "\(list.stdout) \(list.stderr)")
        #expect(list.stdout.contains("off: skipped") && list.stdout.contains("Published to the gateway"), "\(list.stdout)")
        let call = try r.node.cli(["mcp", "call", "t", "echo", "--args", #"{"text":"from the CLI"}"#])
        #expect(call.code == 0 && call.stdout.contains("from the CLI"), "\(call.stdout) \(call.stderr)")
        let fail = try r.node.cli(["mcp", "call", "t", "fail", "--args", #"{"message":"nope"}"#])
        #expect(fail.code == 1 && fail.stdout.contains("\"isError\""), "\(fail.stdout)")
        let doctor = try r.node.cli(["doctor"])
        #expect(doctor.stdout.contains("server t (stdio): openclaw-test"), "\(doctor.stdout)")
        // The server goes with the daemon (stdin closed, then its process group signalled).
        let json = JSONValue.parse(try r.node.cli(["mcp", "list", "--json"]).stdout)
        let endpoint = json?["servers"]?.arrayValue?.first { $0["name"] == "t" }?["endpoint"]?.stringValue ?? ""
        let pid = try #require(Int32(endpoint.replacingOccurrences(of: "pid ", with: "")), "\(String(describing: json))")
        #expect(kill(pid, 0) == 0)
        #expect(r.node.stop() == 0)
        #expect(waitUntil(timeout: 5) { kill(pid, 0) != 0 }, "server pid \(pid) outlived the daemon")
    }
}

extension JSONValue {
    /// The first content block's text of a CallToolResult.
    var firstText: JSONValue? { self["content"]?.arrayValue?.first?["text"] }
}
