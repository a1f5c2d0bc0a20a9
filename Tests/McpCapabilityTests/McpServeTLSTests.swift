import Foundation
@testable import Support
@testable import TestSupport
import Testing

/// `mcp serve --http` on a network address: only with a certificate and key, and then over TLS
/// that the mcp SDK's client verifies against the certificate. The server listens on 10.98.0.1 in
/// a network namespace of the test's own (LanNetns), and the client runs inside it too.
@Suite(.serialized, .enabled(if: LanNetns.available, "needs root and ip(8) for a network namespace"))
struct McpServeTLSTests {
    static func node(_ cert: TestCertificate?) -> NodeUnderTest {
        let tls = cert.map { ", tls: { certificate: '\($0.certPath)', key: '\($0.keyPath)' }" } ?? ""
        return NodeUnderTest(gatewayURL: "ws://127.0.0.1:9", extra: """
            capabilities: { system: { enabled: true }, mcp: { serve: { include: ['device.info', 'system.run']\(tls) } } },
            """)
    }

    @Test func aNetworkAddressIsServedOverVerifiedTLSOnly() throws {
        let lan = try LanNetns(); defer { lan.stop() }
        let cert = try TestCertificate(addresses: [lan.serverAddress]); defer { cert.remove() }
        chmod(cert.keyPath, 0o600)
        let node = Self.node(cert); defer { node.cleanup() }
        let address = "\(lan.serverAddress):8765"
        let entry = try #require(JSONValue.parse(try node.cli(["mcp", "config", "--http", address]).stdout)?["mcpServers"]?["openclaw-node"])
        #expect(entry["url"] == .string("https://\(address)/mcp"), "\(entry)")
        let token = String(try #require(entry["headers"]?["Authorization"]?.stringValue).dropFirst("Bearer ".count))

        let (ip, args) = lan.inside(TestPaths.nodeBinary, ["mcp", "serve", "--http", address, "--config", node.configPath])
        let serve = try BackgroundProcess(ip, args, env: node.env)
        defer { _ = serve.stop() }
        #expect(waitUntil(timeout: 20) { serve.log.contains("serving MCP on https \(address)") }, "\(serve.log)")
        #expect(serve.log.contains("certificate /CN=localhost"), "\(serve.log)")

        // The SDK's client, trusting this certificate: tools listed and called over TLS.
        func client(_ steps: [JSONValue], _ extra: [String]) throws -> ProcessResult {
            let (path, argv) = lan.inside(McpServersTests.python, [McpServeTests.client, TestPaths.nodeBinary, node.configPath,
                                                                   JSONValue.array(steps).jsonString(), "--http", "https://\(address)/mcp",
                                                                   "--token", token] + extra)
            return try runProcess(path, argv, env: node.env, timeout: 120)
        }
        let ok = try client([["do": "list"], ["do": "call", "tool": "system.run", "arguments": ["command": ["/bin/echo", "over TLS"]]]],
                            ["--cafile", cert.certPath])
        let out = ok.stdout.split(separator: "\n").compactMap { JSONValue.parse(String($0)) }
        #expect(ok.code == 0 && out.count == 3, "\(ok.stdout)\n\(ok.stderr.suffix(3000))")
        if out.count == 3 {
            #expect(Set(out[1]["tools"]?.objectValue.map { Array($0.keys) } ?? []) == ["device.info", "system.run"], "\(out[1])")
            #expect(out[2]["structured"]?["stdout"] == "over TLS\n", "\(out[2])")
        }

        // A client that does not trust the certificate gets no further than the handshake.
        let untrusting = try client([["do": "list"]], [])
        #expect(untrusting.code != 0 && untrusting.stderr.contains("CERTIFICATE_VERIFY_FAILED"), "\(untrusting.stderr.suffix(2000))")
        // Plain HTTP to the TLS port gets no HTTP answer; TLS with a wrong token gets 401.
        func curl(_ url: String, _ extra: [String]) throws -> String {
            let (path, argv) = lan.inside("/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "10", "-X", "POST", url,
                                                            "-H", "Content-Type: application/json", "-H", "Accept: application/json, text/event-stream",
                                                            "--data", #"{"jsonrpc":"2.0","id":1,"method":"ping"}"#] + extra)
            return try runProcess(path, argv, timeout: 30).stdout
        }
        #expect(try curl("http://\(address)/mcp", ["-H", "Authorization: Bearer \(token)"]) == "000")
        #expect(try curl("https://\(address)/mcp", ["--cacert", cert.certPath, "-H", "Authorization: Bearer " + String(repeating: "0", count: 64)]) == "401")
        #expect(serve.log.contains("a client's TLS handshake failed"), "\(serve.log)")
        #expect(serve.isRunning, "one bad client does not stop the server: \(serve.log)")
    }

    /// Without a certificate a network address is refused before anything listens, and a
    /// certificate set up carelessly is refused with what to fix.
    @Test func withoutTLSOrWithACarelessKeyNothingListens() throws {
        let bare = Self.node(nil); defer { bare.cleanup() }
        let refused = try bare.cli(["mcp", "serve", "--http", "10.98.0.1:8765"])
        #expect(refused.code == 2 && refused.stderr.contains("capabilities.mcp.serve.tls"), "\(refused.code) \(refused.stderr)")
        #expect(try bare.cli(["mcp", "serve", "--http", "0.0.0.0:8765"]).code == 2)

        let cert = try TestCertificate(); defer { cert.remove() }
        let other = try TestCertificate(); defer { other.remove() }
        chmod(cert.keyPath, 0o644)
        let careless = Self.node(cert); defer { careless.cleanup() }
        let open = try careless.cli(["mcp", "serve", "--http", "127.0.0.1:\(try freeLoopbackPort())"])
        #expect(open.code == 1 && open.stderr.contains("chmod 600 \(cert.keyPath)"), "\(open.code) \(open.stderr)")

        chmod(other.keyPath, 0o600)
        let mismatched = NodeUnderTest(gatewayURL: "ws://127.0.0.1:9", extra: """
            capabilities: { mcp: { serve: { tls: { certificate: '\(cert.certPath)', key: '\(other.keyPath)' } } } },
            """)
        defer { mismatched.cleanup() }
        let wrong = try mismatched.cli(["mcp", "serve", "--http", "127.0.0.1:\(try freeLoopbackPort())"])
        #expect(wrong.code == 1 && wrong.stderr.contains("does not belong to the certificate"), "\(wrong.code) \(wrong.stderr)")
        let half = NodeUnderTest(gatewayURL: "ws://127.0.0.1:9", extra: "capabilities: { mcp: { serve: { tls: { certificate: '\(cert.certPath)' } } } },")
        defer { half.cleanup() }
        #expect(try half.cli(["mcp", "serve", "--http", "10.98.0.1:8765"]).stderr.contains("needs both certificate and key"))
    }
}
