@testable import Config
import Foundation
@testable import HostPresence
@testable import Kit
@testable import NodeCLI
@testable import Registry
@testable import Store
@testable import Support
@testable import TestSupport
import Testing
@testable import Transport

func nextEvent(_ it: inout AsyncStream<WebSocketEvent>.Iterator, timeout: Duration = .seconds(10)) async -> WebSocketEvent? {
    await withTaskGroup(of: WebSocketEvent?.self) { group in
        var local = it
        group.addTask { try? await Task.sleep(for: timeout); return nil }
        let r = await local.next()
        group.cancelAll()
        it = local
        return r
    }
}

/// The client against a third-party server (python3-websockets), plain and TLS.
@Suite(.serialized) struct WebSocketClientTests {
    @Test func echoRoundTripsAndUnicode() async throws {
        let s = try PythonServer(script: "ws_echo.py"); defer { s.stop() }
        let c = try await WebSocketConnection.connect(WebSocketURL(string: "ws://127.0.0.1:\(s.port)/echo")!)
        var it = c.events.makeAsyncIterator()
        for msg in ["hello", "Grüße 🦀 \u{2028}", String(repeating: "y", count: 60_000)] {
            c.send(text: msg)
            #expect(await nextEvent(&it) == .text(msg))
        }
        for i in 0..<200 {
            c.send(text: "m\(i)")
            guard await nextEvent(&it) == .text("m\(i)") else { Issue.record("lost m\(i)"); break }
        }
        c.close()
        if case .closed(let code, _)? = await nextEvent(&it) { #expect(code == 1000) } else { Issue.record("no close") }
    }

    /// With a receive window (a desktop stream's attach socket), a peer that sends faster than the
    /// consumer takes meets TCP's backpressure: while nothing is taken, the server gets only the
    /// window and the kernel's buffers out; once taken, every message arrives, in order.
    @Test func aReceiveWindowPushesBackOnAFastPeer() async throws {
        let s = try PythonServer(script: "ws_echo.py"); defer { s.stop() }
        var o = WebSocketOptions()
        o.maxMessageBytes = 1 << 20
        o.receiveWindow = 1 << 20
        let c = try await WebSocketConnection.connect(WebSocketURL(string: "ws://127.0.0.1:\(s.port)/flood")!, options: o)
        c.send(text: "96")
        // Nothing taken for 2 s: how far did the server get?
        var sent = 0
        let until = Date().addingTimeInterval(2)
        while Date() < until, let line = s.nextLine(timeout: max(0.05, until.timeIntervalSinceNow)) {
            sent = max(sent, JSONValue.parse(line)?["sent"]?.intValue ?? 0)
        }
        #expect(sent < 32 << 20, "the server sent \(sent >> 20) MiB while the client took nothing")
        // Taken now: all 96 MiB, in order.
        var it = c.events.makeAsyncIterator()
        var index = 0, bytes = 0
        while let e = await it.next() {
            if case .binary(let b) = e {
                let n = Int(b[0]) << 24 | Int(b[1]) << 16 | Int(b[2]) << 8 | Int(b[3])
                if n != index { Issue.record("message \(n) came as \(index)"); break }
                index += 1; bytes += b.count
                c.consumed(b.count)
            } else if case .text(let t) = e, t == "done" { break }
            else if case .closed = e { break }
        }
        #expect(bytes == 96 << 20, "\(bytes)")
        c.close()
    }

    @Test func serverCloseCodeAndReason() async throws {
        let s = try PythonServer(script: "ws_echo.py"); defer { s.stop() }
        let c = try await WebSocketConnection.connect(WebSocketURL(string: "ws://127.0.0.1:\(s.port)/close4001")!)
        var it = c.events.makeAsyncIterator()
        c.send(text: "x")
        #expect(await nextEvent(&it) == .closed(code: 4001, reason: "bye-reason"))
    }

    @Test func serverPingIsAnsweredAndClientPingGetsPong() async throws {
        let s = try PythonServer(script: "ws_echo.py"); defer { s.stop() }
        let c = try await WebSocketConnection.connect(WebSocketURL(string: "ws://127.0.0.1:\(s.port)/ping")!)
        var it = c.events.makeAsyncIterator()
        #expect(await nextEvent(&it) == .text("pong-ok"))
        c.sendPing([1, 2, 3])
        #expect(await nextEvent(&it) == .pong([1, 2, 3]))
        c.close()
    }

    @Test func messageSizeLimitClosesWith1009() async throws {
        let s = try PythonServer(script: "ws_echo.py"); defer { s.stop() }
        var o = WebSocketOptions()
        o.maxMessageBytes = 4 * 1024 * 1024
        let c = try await WebSocketConnection.connect(WebSocketURL(string: "ws://127.0.0.1:\(s.port)/big")!, options: o)
        var it = c.events.makeAsyncIterator()
        c.send(text: "\(3 * 1024 * 1024)")
        if case .text(let t)? = await nextEvent(&it) { #expect(t.utf8.count == 3 * 1024 * 1024) } else { Issue.record("no big message") }
        c.maxMessageBytes = 1024 * 1024
        c.send(text: "\(2 * 1024 * 1024)")
        guard case .closed(let code, let reason)? = await nextEvent(&it) else { Issue.record("expected close"); return }
        #expect(code == 1009)
        #expect(reason.contains("larger than"))
    }

    @Test func noOriginHeaderIsSent() async throws {
        let s = try PythonServer(script: "ws_echo.py"); defer { s.stop() }
        let c = try await WebSocketConnection.connect(WebSocketURL(string: "ws://127.0.0.1:\(s.port)/headers")!)
        var it = c.events.makeAsyncIterator()
        guard case .text(let t)? = await nextEvent(&it), let h = JSONValue.parse(t) else { Issue.record("no headers"); return }
        #expect(h["Origin"] == nil)
        #expect(h["Sec-WebSocket-Extensions"] == nil)
        #expect(h["User-Agent"]?.stringValue?.hasPrefix("openclaw-linux-node/") == true)
        c.close()
    }

    @Test func plainWebSocketToPublicAddressIsRefusedBeforeConnecting() async {
        do {
            _ = try await WebSocketConnection.connect(WebSocketURL(string: "ws://203.0.113.7:18789")!)
            Issue.record("expected refusal")
        } catch {
            #expect(error.kind == .insecureURL)
            #expect(error.description.contains("wss://"))
        }
    }

    @Test func addressClassification() throws {
        for (text, fam, priv) in [("127.0.0.1", AF_INET, true), ("10.1.2.3", AF_INET, true), ("172.20.0.1", AF_INET, true),
                                  ("172.32.0.1", AF_INET, false), ("192.168.1.1", AF_INET, true), ("100.100.1.1", AF_INET, true),
                                  ("8.8.8.8", AF_INET, false), ("::1", AF_INET6, true), ("fd00::1", AF_INET6, true),
                                  ("2001:db8::1", AF_INET6, false), ("::ffff:127.0.0.1", AF_INET6, true)] {
            #expect(ResolvedAddress(family: fam, storage: [], text: text).isLoopbackOrPrivate == priv, "\(text)")
        }
    }

    /// Where a setup code's extra tokens may be kept over plain ws://: this machine only, by
    /// number (a name that starts like one is not).
    @Test func loopbackHosts() {
        for (host, loop) in [("127.0.0.1", true), ("127.1.2.3", true), ("localhost", true), ("[::1]", true), ("::1", true),
                             ("127.evil.example", false), ("10.0.0.1", false), ("128.0.0.1", false), ("", false)] {
            #expect(ResolvedAddress.isLoopback(host) == loop, "\(host)")
        }
    }

    @Test func connectionRefusedIsAClearError() async {
        do {
            _ = try await WebSocketConnection.connect(WebSocketURL(string: "ws://127.0.0.1:1/")!)
            Issue.record("expected failure")
        } catch {
            #expect(error.kind == .connect)
            #expect(error.description.contains("refused"))
        }
    }

    @Test func tlsPinningAndTrust() async throws {
        let cert = try TestCertificate(); defer { cert.remove() }
        let s = try PythonServer(script: "ws_echo.py", args: ["--cert", cert.certPath, "--key", cert.keyPath]); defer { s.stop() }
        let fp = try #require(s.ready["fingerprint"]?.stringValue)
        let url = WebSocketURL(string: "wss://127.0.0.1:\(s.port)/echo")!

        var pinned = WebSocketOptions(); pinned.tls = .pinned("SHA256:" + fp.uppercased())
        let c = try await WebSocketConnection.connect(url, options: pinned)
        #expect(c.peerFingerprint == fp)
        var it = c.events.makeAsyncIterator()
        c.send(text: "over tls")
        #expect(await nextEvent(&it) == .text("over tls"))
        c.close()

        var wrong = WebSocketOptions(); wrong.tls = .pinned(String(repeating: "ab", count: 32))
        await #expect(throws: WebSocketError.self) { _ = try await WebSocketConnection.connect(url, options: wrong) }
        do { _ = try await WebSocketConnection.connect(url, options: wrong) } catch {
            #expect(error.kind == .pinMismatch)
            #expect(error.description.contains(fp))
        }

        do { _ = try await WebSocketConnection.connect(url) ; Issue.record("self-signed accepted by system trust") } catch {
            #expect(error.kind == .untrusted)
        }

        var tofu = WebSocketOptions(); tofu.tls = .trustOnFirstUse
        let t = try await WebSocketConnection.connect(url, options: tofu)
        #expect(t.peerFingerprint == fp)
        t.close()

        var ca = WebSocketOptions(); ca.caFile = cert.certPath
        let byName = try await WebSocketConnection.connect(WebSocketURL(string: "wss://localhost:\(s.port)/echo")!, options: ca)
        byName.close()
    }
}

@Suite struct WebSocketFrameTests {
    func serverFrame(_ op: WebSocketOpcode, _ payload: [UInt8], fin: Bool = true) -> [UInt8] {
        WebSocketFrame(fin: fin, opcode: op, payload: payload).encoded(maskKey: nil)
    }

    @Test(arguments: [0, 1, 125, 126, 65535, 65536, 200_000])
    func lengthsRoundTrip(n: Int) throws {
        var d = WebSocketFrameDecoder(maxMessageBytes: 1 << 20)
        let payload = [UInt8](repeating: 0x61, count: n)
        let bytes = serverFrame(.binary, payload)
        // Fed one byte at a time: partial headers must wait, not fail.
        for b in bytes.dropLast() {
            d.feed([b])
            #expect(try d.next() == nil)
        }
        d.feed([bytes.last!])
        #expect(try d.next() == .binary(payload))
        #expect(try d.next() == nil)
    }

    @Test func fragmentsReassembleAroundControlFrames() throws {
        var d = WebSocketFrameDecoder(maxMessageBytes: 1024)
        d.feed(serverFrame(.text, Array("Hel".utf8), fin: false))
        d.feed(serverFrame(.ping, [9]))
        d.feed(serverFrame(.continuation, Array("lo".utf8), fin: true))
        #expect(try d.next() == .ping([9]))
        #expect(try d.next() == .text("Hello"))
        #expect(try d.next() == nil)
    }

    @Test func clientFramesAreMasked() {
        let f = WebSocketFrame(opcode: .text, payload: Array("abc".utf8)).encoded(maskKey: [1, 2, 3, 4])
        #expect(f[1] & 0x80 != 0)
        #expect(Array(f[2..<6]) == [1, 2, 3, 4])
        let masked: [UInt8] = [0x61 ^ 1, 0x62 ^ 2, 0x63 ^ 3]  // typed: Swift 6.0 infers the literal as IndexSet
        #expect(Array(f[6...]) == masked)
    }

    @Test(arguments: [
        ([0x81, 0x81, 0, 0, 0, 0, 0x41] as [UInt8], WebSocketProtocolError.maskedServerFrame),
        ([0xC1, 0x00], .reservedBits),
        ([0x83, 0x00], .unknownOpcode(3)),
        ([0x09, 0x00], .fragmentedControlFrame),
        ([0x80, 0x00], .unexpectedContinuation),
        ([0x81, 0x7E, 0x00, 0x05], .nonMinimalLength),
        ([0x89, 0x7E, 0x00, 0x80], .controlFrameTooLong),
        ([0x81, 0x02, 0xC3, 0x28], .invalidUTF8),
        ([0x88, 0x01, 0x03], .invalidClosePayload),
        ([0x82, 0x7F, 0, 0, 0, 0, 0x7F, 0xFF, 0xFF, 0xFF], .messageTooBig(limit: 1024)),
    ])
    func protocolViolations(bytes: [UInt8], error: WebSocketProtocolError) {
        var d = WebSocketFrameDecoder(maxMessageBytes: 1024)
        d.feed(bytes)
        #expect(throws: error) { _ = try d.next() }
    }

    @Test func newDataFrameDuringFragmentedMessage() {
        var d = WebSocketFrameDecoder(maxMessageBytes: 1024)
        d.feed(serverFrame(.text, [0x61], fin: false))
        d.feed(serverFrame(.text, [0x62]))
        #expect(throws: WebSocketProtocolError.expectedContinuation) { while try d.next() != nil {} }
    }

    @Test func fragmentedMessageOverLimit() {
        var d = WebSocketFrameDecoder(maxMessageBytes: 10)
        d.feed(serverFrame(.binary, [UInt8](repeating: 1, count: 8), fin: false))
        d.feed(serverFrame(.continuation, [UInt8](repeating: 1, count: 8)))
        #expect(throws: WebSocketProtocolError.messageTooBig(limit: 10)) { while try d.next() != nil {} }
    }

    /// Random and mutated byte streams: the decoder must throw or wait, never crash or hang.
    @Test func fuzzDecoder() {
        var rng = SystemRandomNumberGenerator()
        let seeds: [[UInt8]] = [serverFrame(.text, Array("{\"type\":\"event\"}".utf8)), serverFrame(.binary, [UInt8](repeating: 7, count: 300)),
                                serverFrame(.close, [0x03, 0xE8, 0x61]), serverFrame(.text, Array("abc".utf8), fin: false) + serverFrame(.continuation, [0x64])]
        for round in 0..<20_000 {
            var bytes: [UInt8]
            if round % 2 == 0 {
                bytes = (0..<Int.random(in: 0...64, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            } else {
                bytes = seeds[round % seeds.count]
                for _ in 0..<Int.random(in: 1...4, using: &rng) where !bytes.isEmpty {
                    bytes[Int.random(in: 0..<bytes.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
                }
            }
            var d = WebSocketFrameDecoder(maxMessageBytes: 4096)
            d.feed(bytes)
            var steps = 0
            while steps < 100, (try? d.next()) != nil { steps += 1 }
            #expect(steps < 100)
        }
    }
}
