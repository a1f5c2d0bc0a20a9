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
        #expect(asked.isSuperset(of: Self.answers), "not asked: \(Set(Self.answers).subtracting(asked))")
        Thread.sleep(forTimeInterval: 1)
        #expect(r.node.process?.isRunning == true, "the daemon died: \(r.node.log.suffix(4000))")
        let echo = try #require(r.call("good", "echo", #"{"text":"still here"}"#), "\(r.node.log.suffix(3000))")
        #expect(echo["payload"]?.firstText == "still here", "\(echo)")
        // The log says why, in words.
        for reason in ["is not a length", "two different Content-Lengths", "has no valid size", "longer than its size", "not HTTP/1.1"] {
            #expect(r.node.log.contains(reason), "no '\(reason)' in the log: \(r.node.log.suffix(4000))")
        }
        let down = try #require(r.call("h0", "anything"))
        #expect(down["error"]?["code"] == "MCP_SERVER_UNAVAILABLE", "\(down)")
    }
}
