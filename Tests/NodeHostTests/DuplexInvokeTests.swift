import Foundation
@testable import Kit
@testable import Support
@testable import TestSupport
import Testing

/// Duplex invokes through the real daemon and the test gateway, which checks every progress frame
/// against the 2026.8 schema and as the gateway does (nodeId, 16 KiB of UTF-8, seq from 0 without
/// gaps): the example bundle's hello.stream (the Kit's DuplexChannel) streams, heartbeats and
/// echoes input; system.run streams its output and is cancelled with its whole process tree.
@Suite(.serialized) struct DuplexInvokeTests {
    /// An installed node with the example bundle and system.run on, connected to a test gateway.
    final class Rig: @unchecked Sendable {
        let gw: TestGateway
        let tree: BundleLoadingTests.InstallTree
        let node: BackgroundProcess

        init() throws {
            gw = try TestGateway(stateFile: TestPaths.tempDir("gw") + "/gw.json", args: ["--auto-approve"])
            tree = try ExampleBundleTests.tree("capabilities: { hello: { enabled: true }, system: { enabled: true, streamOutput: true } }")
            var env = tree.env
            env["OPENCLAW_GATEWAY_URL"] = gw.url
            env["OPENCLAW_NODE_LOG"] = "debug"
            // Heartbeats every 300 ms instead of 5 s, so a test sees several while it waits.
            env["OPENCLAW_NODE_DUPLEX_HEARTBEAT_MS"] = "300"
            node = try BackgroundProcess(tree.binary, ["run", "--config", tree.config], env: env)
            guard gw.waitFor("hello") != nil else { throw TestFailure("no hello: \(node.log)") }
        }

        /// Sends an invoke without waiting for its result.
        func start(_ command: String, id: String, _ params: JSONValue, extra: [String: JSONValue] = [:]) {
            var c: [String: JSONValue] = ["cmd": "invoke", "id": .string(id), "command": .string(command),
                                          "paramsJSON": .string(params.jsonString()), "timeoutMs": 120_000]
            c.merge(extra) { _, new in new }
            gw.command(.object(c))
        }

        func input(_ id: String, seq: Int, _ payload: String) {
            gw.command(["cmd": "input", "id": .string(id), "seq": .number(Double(seq)), "payloadJSON": .string(payload)])
            _ = gw.waitFor("input_sent") { $0["id"]?.stringValue == id && $0["seq"]?.intValue == seq }
        }

        func result(_ id: String, wait: TimeInterval = 60) throws -> JSONValue {
            try #require(gw.waitFor("invoke_result", timeout: wait) { $0["id"]?.stringValue == id }, "\(node.log.suffix(4000))")
        }

        func progress(_ id: String) -> [JSONValue] { gw.all("progress").filter { $0["id"]?.stringValue == id } }

        func stop() {
            node.stop()
            gw.stop()
            tree.cleanup()
        }
    }

    /// What hello.stream streams for block `index` (as Examples/hello-bundle/Sources/HelloStream.swift).
    static func block(_ index: Int, chars: Int) -> String {
        let pattern = Array("hello é ✓ 🦀 ".unicodeScalars)
        var s = String.UnicodeScalarView()
        for i in 0..<chars { s.append(pattern[(index + i) % pattern.count]) }
        return String(s)
    }

    /// Progress of one invoke: seq 0, 1, 2, … without gaps, every chunk ≤ 16 KiB of UTF-8.
    static func checkSequence(_ chunks: [JSONValue]) {
        #expect(chunks.compactMap { $0["seq"]?.intValue } == Array(0..<chunks.count), "\(chunks.prefix(5))")
        #expect(chunks.allSatisfy { ($0["bytes"]?.intValue ?? .max) <= 16_384 })
    }

    @Test func aDuplexCommandStreamsManyChunksInOrderWithHeartbeatsThenEchoesInput() throws {
        let r = try Rig(); defer { r.stop() }
        let id = "stream-1"
        // 30 blocks of 20 000 characters: about 30 KB each in 1- to 4-byte characters, so every
        // block is cut into two chunks, somewhere inside a multi-byte character's neighbourhood.
        r.start("hello.stream", id: id, ["blocks": 30, "blockChars": 20_000, "echo": true])
        // Streamed, it waits for input, quiet: heartbeats keep the invoke alive meanwhile.
        #expect(waitUntil(timeout: 30) { r.progress(id).filter { $0["chunk"] == "" }.count >= 3 }, "\(r.node.log.suffix(3000))")
        r.input(id, seq: 0, #"{"say":"first"}"#)
        r.input(id, seq: 0, #"{"say":"first"}"#)  // a duplicate: dropped
        r.input(id, seq: 1, "second ✓")
        r.input(id, seq: 2, "end")
        let res = try r.result(id)
        #expect(res["ok"] == true, "\(res)")
        #expect(res["payload"]?["inputs"] == [#"{"say":"first"}"#, "second ✓"], "\(res)")
        #expect(res["payload"]?["streaming"] == true)

        let chunks = r.progress(id)
        Self.checkSequence(chunks)
        #expect(r.gw.schemaErrors.isEmpty, "\(r.gw.schemaErrors)")
        #expect(r.gw.all("progress_gap").isEmpty)
        let text = chunks.compactMap { $0["chunk"]?.stringValue }.joined()
        let expected = (0..<30).map { Self.block($0, chars: 20_000) }.joined() + "echo: {\"say\":\"first\"}\necho: second ✓\n"
        #expect(text == expected, "streamed \(text.utf8.count) bytes, expected \(expected.utf8.count)")
        // Cut as full as a code point boundary allows: a text chunk that is not the last of its
        // block carries at least 16 KiB minus 3 bytes.
        let texts = chunks.filter { $0["chunk"] != "" }
        #expect(texts.count == 30 * 2 + 2, "\(texts.count) text chunks")
        for (i, c) in texts.enumerated() where i < 60 && i % 2 == 0 {
            #expect((c["bytes"]?.intValue ?? 0) >= 16_381, "chunk \(i): \(c["bytes"] ?? .null) bytes")
        }
        #expect((res["payload"]?["bytes"]?.intValue ?? 0) == expected.utf8.count)
        #expect(res["progress"]?["heartbeats"]?.intValue ?? 0 >= 3)
    }

    @Test func inputSentBeforeTheHandlerListensIsKeptAndTooMuchOfItFailsTheInvoke() throws {
        let r = try Rig(); defer { r.stop() }
        // The handler sleeps 2 s before it reads: these arrive while nobody listens.
        r.start("hello.stream", id: "early", ["blocks": 0, "echo": true, "holdMs": 2_000])
        r.input("early", seq: 0, "a")
        r.input("early", seq: 1, "b")
        r.input("early", seq: 2, "end")
        let res = try r.result("early")
        #expect(res["ok"] == true && res["payload"]?["inputs"] == ["a", "b"], "\(res)")

        // More than 64 KiB unread fails the invoke closed.
        r.start("hello.stream", id: "flood", ["blocks": 0, "echo": true, "holdMs": 10_000])
        let big = String(repeating: "x", count: 16_000)
        for seq in 0..<5 { r.input("flood", seq: seq, big) }
        let flood = try r.result("flood")
        #expect(flood["ok"] == false && flood["error"]?["code"] == "INPUT_BUFFER_OVERFLOW", "\(flood)")
        #expect(r.gw.all("gateway_schema_error").isEmpty, "\(r.gw.all("gateway_schema_error"))")
    }

    @Test func ignoredTrueStopsTheStream() throws {
        let r = try Rig(); defer { r.stop() }
        // The gateway takes 5 chunks, then answers ignored:true (as for an invoke nobody listens to).
        r.start("hello.stream", id: "ign", ["blocks": 200, "blockChars": 100], extra: ["ignoreProgressAfter": 5])
        let res = try r.result("ign")
        #expect(res["ok"] == true && res["payload"]?["streaming"] == false, "\(res)")
        let chunks = r.progress("ign")
        Self.checkSequence(chunks)
        // One chunk got the ignored answer; nothing was sent after it.
        #expect(chunks.count == 6 && chunks.last?["ignored"] == true, "\(chunks.count) chunks")
        #expect(res["payload"]?["bytes"]?.intValue == (0..<5).map { Self.block($0, chars: 100).utf8.count }.reduce(0, +))
    }

    @Test func systemRunStreamsItsOutputAndCancelEndsTheWholeProcessTree() throws {
        let r = try Rig(); defer { r.stop() }
        let pids = r.tree.root + "/pids"
        // A shell that records its own PID and a background child's, then prints forever.
        let script = "echo $$ > \(pids); sleep 300 & echo $! >> \(pids); while true; do echo tick; sleep 0.05; done"
        r.start("system.run", id: "run-c", ["command": ["/bin/sh", "-c", .string(script)], "runId": "c1"])
        #expect(waitUntil(timeout: 30) { r.progress("run-c").filter { $0["chunk"]?.stringValue?.contains("tick") == true }.count >= 3 },
                "\(r.node.log.suffix(3000))")
        let started = try String(contentsOfFile: pids, encoding: .utf8).split(separator: "\n").compactMap { Int32($0) }
        #expect(started.count == 2)
        #expect(started.allSatisfy { kill($0, 0) == 0 })
        r.gw.command(["cmd": "cancel", "id": "run-c"])
        let res = try r.result("run-c")
        #expect(res["ok"] == false && res["error"]?["code"] == "CANCELLED", "\(res)")
        // Nothing it started is left running.
        #expect(waitUntil(timeout: 10) { started.allSatisfy { kill($0, 0) != 0 } }, "still running: \(started.filter { kill($0, 0) == 0 })")
        let chunks = r.progress("run-c")
        Self.checkSequence(chunks)
        // system.run is not a duplex command: its output streams, no heartbeats.
        #expect(!chunks.contains { $0["chunk"] == "" })
        #expect(r.gw.schemaErrors.isEmpty, "\(r.gw.schemaErrors)")
    }
}

/// The fragment framing end to end: hello.stream with `framed` says it is ready, takes a message
/// of several fragments (only after the caller's ready), answers it reversed, and a frame that
/// breaks the rules fails the invoke.
@Suite(.serialized) struct DuplexFramingTests {
    @Test func binaryMessagesTravelAsFragmentsBothWays() throws {
        let r = try DuplexInvokeTests.Rig(); defer { r.stop() }
        r.start("hello.stream", id: "bin", ["blocks": 0, "framed": true])
        // The node's ready comes first.
        #expect(waitUntil(timeout: 20) { r.progress("bin").contains { $0["chunk"]?.stringValue == DuplexFrame.ready.text } }, "\(r.node.log.suffix(3000))")
        let message = (0..<20_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        var seq = 0
        r.input("bin", seq: seq, DuplexFrame.ready.text); seq += 1
        for frame in DuplexFrame.fragments(of: message, message: 0) { r.input("bin", seq: seq, frame.text); seq += 1 }
        for frame in DuplexFrame.fragments(of: [], message: 1) { r.input("bin", seq: seq, frame.text); seq += 1 }
        let res = try r.result("bin")
        #expect(res["ok"] == true && res["payload"]?["inputs"] == ["20000"], "\(res)")
        // What came back: the ready, then message 0 in three fragments, reversed.
        var back = DuplexReassembler()
        var echoed: [UInt8]?
        for chunk in r.progress("bin").compactMap({ $0["chunk"]?.stringValue }) where !chunk.isEmpty {
            let frame = try DuplexFrame.parse(chunk)
            if frame != .ready, let m = try back.accept(frame) { echoed = m }
        }
        #expect(echoed == Array(message.reversed()))
        #expect(r.gw.schemaErrors.isEmpty, "\(r.gw.schemaErrors)")
    }

    @Test func aFrameThatBreaksTheRulesFailsTheInvoke() throws {
        let r = try DuplexInvokeTests.Rig(); defer { r.stop() }
        r.start("hello.stream", id: "bad", ["blocks": 0, "framed": true])
        // Data before the caller's ready.
        r.input("bad", seq: 0, DuplexFrame.data(message: 0, index: 0, last: true, bytes: [1, 2, 3]).text)
        let res = try r.result("bad")
        #expect(res["ok"] == false && res["error"]?["code"] == "DUPLEX_FRAMING", "\(res)")
    }
}
