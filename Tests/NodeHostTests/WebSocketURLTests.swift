import Foundation
@testable import TestSupport
import Testing
@testable import Transport

/// The gateway URL parser against Foundation's URL (which the node used before it stopped
/// linking Foundation) on the URLs a user or discovery writes, and what it refuses on purpose.
@Suite struct WebSocketURLTests {
    @Test(arguments: [
        "ws://127.0.0.1:18789", "wss://gw.example.org", "WS://Host.Local:80/path?x=1&y=2", "ws://[::1]:18789",
        "wss://[fe80::1%25eth0]:443/", "ws://gw:18789/a/b/?oc_cap=abc#frag", "ws://gw", "wss://gw:65535",
    ])
    func agreesWithFoundation(text: String) throws {
        let ours = try #require(WebSocketURL(string: text))
        let theirs = try #require(URL(string: text))
        #expect(ours.scheme == theirs.scheme?.lowercased())
        #expect(ours.port == theirs.port)
        #expect(ours.path == theirs.path(percentEncoded: true))
        #expect(ours.query == theirs.query(percentEncoded: true))
        // Foundation keeps IPv6 brackets and the %25 in host(percentEncoded: true); ours is what
        // getaddrinfo takes.
        let host = try #require(theirs.host(percentEncoded: false))
        #expect(ours.host == host.replacingOccurrences(of: "[", with: "").replacingOccurrences(of: "]", with: ""), "\(text)")
        #expect(ours.absoluteString == text.split(separator: "#").first.map(String.init))
    }

    @Test(arguments: ["", "127.0.0.1:18789", "ws://", "ws://:80", "ws://gw:port", "ws://gw:99999", "ws://g w:80",
                      "ws://user:pass@gw:80", "ws://[::1:80", "ws://gw:80/a b", "://gw"])
    func refuses(text: String) {
        #expect(WebSocketURL(string: text) == nil, "\(text)")
    }

    @Test func schemeSwap() throws {
        let u = try #require(WebSocketURL(string: "ws://[fe80::1%25eth0]:18789/x?y=1"))
        let s = u.with(scheme: "wss")
        #expect(s.absoluteString == "wss://[fe80::1%25eth0]:18789/x?y=1" && s.host == "fe80::1%eth0" && s.port == 18789)
    }
}
