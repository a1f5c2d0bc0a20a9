import Foundation
@testable import Kit
@testable import McpCapability
@testable import Support
@testable import TestSupport
import Testing

/// What an MCP server sends before the node acts on it — its SSE stream, its JSON-RPC messages and
/// its tool results — fuzzed with mutated and random input: no trap, no input over a second, SSE
/// events the same however the stream was cut, and every bounded result within upstream's caps.
@Suite struct McpParserFuzzTests {
    static let stream = Array("event: message\nid: 7\nretry: 100\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n: keep-alive\r\ndata: a\r\ndata: b\r\n\r\n".utf8)
    static let messages = [
        #"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}],"structuredContent":{"a":1}}}"#,
        #"{"jsonrpc":"2.0","id":"x","error":{"code":-32601,"message":"no"}}"#,
        #"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#,
        #"{"jsonrpc":"2.0","id":9,"method":"ping","params":{}}"#,
    ]

    static func events(_ bytes: [UInt8], cut: Int) -> [SSEParser.Event] {
        var p = SSEParser(maxEventBytes: 256)
        var out: [SSEParser.Event] = []
        var i = 0
        while i < bytes.count {
            let n = cut == 0 ? bytes.count : min(cut, bytes.count - i)
            out += p.feed(Array(bytes[i..<(i + n)]))
            i += n
        }
        return out
    }

    @Test func sseStreamsCutAnywhere() {
        #expect(Self.events(Self.stream, cut: 0).map(\.data) == [#"{"jsonrpc":"2.0","id":1,"result":{}}"#, "a\nb"])
        var rng = SeededRandom(seed: 0x5353_4531)
        let n = Chaos.size(5_000, full: 500_000)
        var failures = 0
        for i in 0..<n {
            let input = i % 10 == 0 ? rng.bytes(rng.below(400)) : rng.mutate(Self.stream, punctuation: Array("\r\n:data event id ".utf8))
            let cut = 1 + rng.below(30)
            if Self.events(input, cut: 0) != Self.events(input, cut: cut) {
                failures += 1
                if failures < 5 { Issue.record("stream #\(i) gave other events in pieces of \(cut)") }
            }
        }
        Chaos.report("fuzz-sse", ["iterations": .number(Double(n)), "failures": .number(Double(failures))])
    }

    @Test func jsonRPCMessagesAndToolResults() {
        var rng = SeededRandom(seed: 0x4A52_5043)
        let n = Chaos.size(5_000, full: 500_000)
        var failures = 0
        for i in 0..<n {
            let text = rng.mutate(Array(Self.messages[rng.below(Self.messages.count)].utf8))
            let started = ContinuousClock.now
            if let v = JSONValue.parse(String(decoding: text, as: UTF8.self)) {
                _ = JSONRPCMessage(v)
                let bounded = CallResultBounds.bound(v["result"] ?? v)
                let textBytes = (bounded["content"]?.arrayValue ?? []).reduce(0) { $0 + ($1["text"]?.stringValue?.utf8.count ?? 0) }
                if textBytes > CallResultBounds.maxTextBytes { failures += 1; Issue.record("#\(i): \(textBytes) bytes of text kept") }
            }
            if ContinuousClock.now - started > .seconds(1) { failures += 1; Issue.record("message #\(i) took over a second") }
        }
        Chaos.report("fuzz-json-rpc", ["iterations": .number(Double(n)), "failures": .number(Double(failures))])
    }
}
