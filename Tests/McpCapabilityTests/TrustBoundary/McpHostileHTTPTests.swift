import Foundation
@testable import Support
@testable import TestSupport
import Testing

/// MCP servers over HTTP that answer with lengths and chunk sizes meant to break the client (a
/// negative Content-Length at `initialize` used to kill the daemon at every start): each is refused
/// with a reason in the log, and the daemon goes on serving a good server beside them.
@Suite(.serialized) struct McpHostileHTTPTests {
    static let answers = ["neg-length", "plus-length", "huge-length", "int-max-length", "two-lengths", "neg-chunk",
                          "overflow-chunk", "wrap-chunk", "short-chunk", "status-garbage", "head-only", "sse-neg-retry"]

    @Test func hostileAnswersAreRefusedAndTheDaemonServesOn() throws {
        let hostile = try PythonServer(script: "hostile_http.py")
        defer { hostile.stop() }
        let r = try McpServersTests.rig { _ in
            McpServersTests.testServer("good")
                + Self.answers.enumerated().map { i, a in
                    "h\(i): { url: 'http://127.0.0.1:\(hostile.port)/mcp/\(a)', transport: 'streamable-http', timeoutMs: 3000 },"
                }.joined()
        }
        defer { r.cleanup() }
        #expect(r.catalogue { $0.contains("good_echo") } != nil, "\(r.node.log.suffix(4000))")
        // Every hostile server was asked (its answer read) at least once.
        var asked = Set<String>()
        _ = waitUntil(timeout: 30) {
            while let line = hostile.nextLine(timeout: 0.2) {
                if let p = JSONValue.parse(line)?["path"]?.stringValue { asked.insert(String(p.split(separator: "/").last ?? "")) }
            }
            return asked.isSuperset(of: Self.answers)
        }
        #expect(asked.isSuperset(of: Self.answers), "not asked: \(Set(Self.answers).subtracting(asked)); \(r.node.log.suffix(6000))")
        // Every refusal logged (the answers were read and judged), and the daemon still there.
        let reasons = ["is not a length", "two different Content-Lengths", "has no valid size", "longer than its size", "not HTTP/1.1"]
        _ = waitUntil(timeout: 20) { reasons.allSatisfy { r.node.log.contains($0) } }
        #expect(r.node.process?.isRunning == true, "the daemon died: \(r.node.log.suffix(4000))")
        let echo = try #require(r.call("good", "echo", #"{"text":"still here"}"#), "\(r.node.log.suffix(3000))")
        #expect(echo["payload"]?.firstText == "still here", "\(echo)")
        // The log says why, in words.
        for reason in reasons {
            #expect(r.node.log.contains(reason), "no '\(reason)' in the log: \(r.node.log.suffix(4000))")
        }
        let down = try #require(r.call("h0", "anything"))
        #expect(down["error"]?["code"] == "MCP_SERVER_UNAVAILABLE", "\(down)")
    }

    /// Another local account holds the loopback port of an http:// server whose headers carry a
    /// `${VAR}` token: the node checks who owns the listener (/proc/net/tcp) and sends it nothing.
    @Test(.enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"), "needs root to run a listener as another account"))
    func aListenerOfAnotherAccountGetsNoSecret() throws {
        // In /tmp itself: the suite's TMPDIR is a 0700 directory the other account cannot enter.
        let dir = "/tmp/ocn-mcp-other-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        chmod(dir, 0o755)
        try FileManager.default.copyItem(atPath: TestPaths.repoRoot + "/Tests/gateway/hostile_http.py", toPath: dir + "/h.py")
        chmod(dir + "/h.py", 0o755)
        let other = try BackgroundProcess("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-u", dir + "/h.py"])
        defer { other.stop() }
        #expect(waitUntil(timeout: 10) { other.log.contains("port") }, "\(other.log)")
        let port = try #require(JSONValue.parse(String(other.log.split(separator: "\n").first ?? ""))?["port"]?.intValue)
        let r = try McpServersTests.rig(servers: { _ in
            McpServersTests.testServer("good")
                + "stolen: { url: 'http://127.0.0.1:\(port)/mcp/ok-json', transport: 'streamable-http', headers: { Authorization: 'Bearer ${MCP_SECRET}' } },"
        }, nodeEnv: ["MCP_SECRET": "s3cret-token"])
        defer { r.cleanup() }
        #expect(r.catalogue { $0.contains("good_echo") } != nil, "\(r.node.log.suffix(3000))")
        #expect(waitUntil(timeout: 15) { r.node.log.contains("belongs to another account (nobody)") }, "\(r.node.log.suffix(3000))")
        #expect(!other.log.contains("\"path\""), "the other account's listener was sent a request: \(other.log)")
        // The same server as the node's own account: the headers go (McpServersTests covers the calls).
        let own = try PythonServer(script: "hostile_http.py")
        defer { own.stop() }
        #expect(LoopbackListener.refusal(port: own.port, host: "127.0.0.1") == nil)
        #expect(LoopbackListener.refusal(port: port, host: "127.0.0.1")?.contains("nobody") == true)
    }
}
