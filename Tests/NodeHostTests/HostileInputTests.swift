@testable import Config
import Foundation
@testable import GatewaySession
@testable import Kit
@testable import NodeDaemon
@testable import Support
@testable import TestSupport
import Testing
@testable import Transport

/// #16's hostile input: random and mutated WebSocket frames into the frame decoder, gateway
/// messages into the parser, mutated JSON5 documents into the config loader, and generated params
/// for every command of every bundle through its decoder and validation. Zero crashes (a trap kills
/// the run), zero hangs (no input may take a second), and every params rejection is INVALID_REQUEST
/// with a message. Deterministic seeds: a failure names its seed and iteration, so it replays.
/// `scripts/test` runs a short version; `scripts/chaos` sets OPENCLAW_CHAOS_SCALE for the full one.
@Suite(.serialized) struct HostileInputTests {
    /// 1 in scripts/test; scripts/chaos uses 500 (1,000,000 frames and documents).
    static let scale = Chaos.scale
    static let seed: UInt64 = 0x0C1A_57ED

    typealias Rng = SeededRandom

    /// Runs `body` and fails the test when one input takes longer than a second (a hang).
    static func timed(_ what: String, _ i: Int, _ body: () -> Void) {
        let t = ContinuousClock.now
        body()
        let took = ContinuousClock.now - t
        if took > .seconds(1) { Issue.record("\(what) #\(i) (seed \(seed)) took \(took)") }
    }

    @Test func framesIntoTheDecoderAndMessagesIntoTheParser() {
        var rng = Rng(seed: Self.seed)
        let valid: [[UInt8]] = [
            WebSocketFrame(opcode: .text, payload: Array(#"{"type":"event","event":"tick","payload":{"ts":1}}"#.utf8)).encoded(maskKey: nil),
            WebSocketFrame(fin: false, opcode: .text, payload: Array("{\"a\":".utf8)).encoded(maskKey: nil)
                + WebSocketFrame(opcode: .continuation, payload: Array("1}".utf8)).encoded(maskKey: nil),
            WebSocketFrame(opcode: .ping, payload: [1, 2]).encoded(maskKey: nil),
            WebSocketFrame(opcode: .binary, payload: rng.bytes(300)).encoded(maskKey: [1, 2, 3, 4]),
        ]
        let messages = [#"{"type":"event","event":"node.invoke.request","payload":{"id":"1","nodeId":"n","command":"device.info","paramsJSON":"{}"}}"#,
                        #"{"type":"res","id":"r1","ok":true,"payload":{"x":[1,2,{"y":null}]}}"#,
                        #"{"type":"req","id":"q","method":"ping","params":{}}"#]
        let n = 2_000 * Self.scale
        for i in 0..<n {
            let input = i % 3 == 0 ? rng.bytes(rng.below(64)) : rng.mutate(valid[rng.below(valid.count)])
            Self.timed("frame", i) {
                var d = WebSocketFrameDecoder(maxMessageBytes: 1 << 16)
                d.feed(input)
                while let m = try? d.next() {
                    if case .text(let t) = m { _ = GatewayProtocol.parse(t) }
                }
            }
            let text = String(decoding: rng.mutate(Array(messages[rng.below(messages.count)].utf8)), as: UTF8.self)
            Self.timed("message", i) { _ = GatewayProtocol.parse(text) }
        }
    }

    @Test func mutatedConfigDocuments() throws {
        var rng = Rng(seed: Self.seed &+ 1)
        let corpus = [try String(contentsOfFile: TestPaths.repoRoot + "/config.json5", encoding: .utf8),
                      "{ capabilities: { location: { enabled: true, significantChangeMeters: 1e19 } } }",
                      "{ gateway: { url: 'ws://[::1]:1', discovery: { wideAreaDomain: 'a.b.' } }, plugins: { entries: { x: { enabled: true } } } }"]
        let n = 2_000 * Self.scale
        for i in 0..<n {
            let text = String(decoding: rng.mutate(Array(corpus[rng.below(corpus.count)].utf8)), as: UTF8.self)
            Self.timed("config", i) { _ = try? ConfigLoader.parse(text, file: "fuzz.json5") }
        }
    }

    /// Values a careless decoder trips over.
    static func hostileValue(_ rng: inout Rng, depth: Int = 0) -> JSONValue {
        switch rng.below(depth > 3 ? 9 : 11) {
        case 0: return .number(1e19)
        case 1: return .number(-9.3e18)
        case 2: return .number(1e308)
        case 3: return .string(["NaN", "Infinity", "-0", "", "\u{0}", "1e999"][rng.below(6)])
        case 4: return .number(Double(rng.below(2000)) - 1000)
        case 5: return .number(0.5)
        case 6: return .bool(rng.below(2) == 0)
        case 7: return .null
        case 8: return .string(String(repeating: "x", count: rng.below(64)))
        case 9: return .array((0..<rng.below(4)).map { _ in hostileValue(&rng, depth: depth + 1) })
        // Nested objects carry the names nested params use (a placement's x/y/width/height, …).
        default: return .object([["k", "x", "y", "width", "height", "timeoutMs", "maxBytes"][rng.below(7)]: hostileValue(&rng, depth: depth + 1)])
        }
    }

    @Test func generatedParamsForEveryCommand() throws {
        var rng = Rng(seed: Self.seed &+ 2)
        var config = NodeConfig()
        for name in config.catalog.names { config.capabilities[name]?.enabled = true }
        config.stateDir = TestPaths.tempDir("fuzz-state")
        let specs = try NodeRuntime.capabilities(config: config, presence: FixedPresenceSource(.foreground, reason: "test")).flatMap(\.commands)
        #expect(specs.count >= 25, "every bundle loaded: \(specs.map(\.name))")
        // Deep nesting and a 10 MB string, once per command.
        var deep: JSONValue = 1
        for _ in 0..<5_000 { deep = .array([deep]) }
        let huge = JSONValue.string(String(repeating: "a", count: 10 << 20))
        for spec in specs {
            let fields = spec.paramsDoc.flatMap { $0.0.split(separator: ",").map { $0.trimmed() } } + ["extra", "__proto__"]
            for i in 0..<(100 * Self.scale) {
                var o: [String: JSONValue] = [:]
                for _ in 0..<(1 + rng.below(4)) { o[fields[rng.below(fields.count)]] = Self.hostileValue(&rng) }
                if i == 0 { o[fields[0]] = deep }
                if i == 1 { o[fields[0]] = huge }
                let params: InvokeParams = i % 17 == 0 ? InvokeParams(text: String(decoding: rng.bytes(20), as: UTF8.self))
                    : i % 13 == 0 ? .value(Self.hostileValue(&rng)) : .value(.object(o))
                Self.timed(spec.name, i) {
                    do throws(NodeError) { _ = try spec.prepared(params) } catch {
                        // Most commands answer bad params with code INVALID_REQUEST; desktop.stream keeps
                        // upstream's shape (code UNAVAILABLE, message "INVALID_REQUEST: …"). Either way the
                        // rejection must name the problem, never crash or leak another code.
                        let paramRejection = error.code == .invalidRequest
                            || (error.code == .unavailable && error.message.hasPrefix("INVALID_REQUEST: "))
                        if !paramRejection || error.message.count <= "INVALID_REQUEST: ".count {
                            Issue.record("\(spec.name) #\(i): \(error.code) \(error.message.prefix(200))")
                        }
                    }
                }
            }
        }
    }
}
