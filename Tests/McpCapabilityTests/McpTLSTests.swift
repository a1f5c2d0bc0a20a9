import Foundation
@testable import Support
@testable import TestSupport
import Testing

/// A streamable-HTTP server behind TLS: verified against the server's caFile it is used; the same
/// server without a CA the node trusts is refused (never a warning and on anyway).
@Suite(.serialized) struct McpTLSTests {
    @Test func httpsIsVerified() throws {
        let cert = try TestCertificate(); defer { cert.remove() }
        let plain = try freeLoopbackPort()
        let server = try BackgroundProcess(McpServersTests.python, [McpServersTests.script, "--transport", "streamable-http", "--port", String(plain)])
        defer { server.stop() }
        #expect(waitUntil(timeout: 20) { (try? TCPSocket.connect(TCPSocket.resolve(host: "127.0.0.1", port: plain), timeout: .seconds(1)))?.close() != nil }, "\(server.log)")
        let proxy = try PythonServer(script: "../mcp/tls_proxy.py", args: ["--to", String(plain), "--cert", cert.certPath, "--key", cert.keyPath])
        defer { proxy.stop() }
        let url = "https://localhost:\(proxy.port)/mcp"
        let r = try McpServersTests.rig { _ in
            "trusted: { url: '\(url)', caFile: '\(cert.certPath)' }, untrusted: { url: '\(url)' },"
        }
        defer { r.cleanup() }
        let names = try #require(r.catalogue { $0.contains("trusted_echo") }, "\(r.node.log.suffix(3000))")
        #expect(!names.contains { $0.hasPrefix("untrusted_") }, "\(names)")
        let echo = try #require(r.call("trusted", "echo", #"{"text":"over TLS"}"#))
        #expect(echo["payload"]?.firstText == "over TLS", "\(echo)")
        let refused = try #require(r.call("untrusted", "echo", #"{"text":"x"}"#))
        #expect(refused["error"]?["code"] == "MCP_SERVER_UNAVAILABLE")
        #expect(waitUntil(timeout: 10) { r.node.log.contains("the certificate of localhost is not trusted") }, "\(r.node.log.suffix(3000))")
    }
}
