@testable import Support
@testable import TestSupport
import Testing

/// The one HTTP/1.1 response parser (MCP streamable HTTP, the join-URL fetch): every length and
/// chunk size a server sends is checked before use. Attacks first (each must be refused with a
/// reason, never trap), then the legitimate framings, then a fuzz run: mutated answers fed in random
/// pieces must never trap, hang, or parse differently depending on where the pieces were cut.
@Suite struct HTTPResponseParserTests {
    static let text = #"{"jsonrpc":"2.0","id":1,"result":{}}"#
    static let body = Array(text.utf8)

    /// Feeds `raw` in pieces of `cut` bytes (0: all at once), then ends the stream.
    static func parse(_ raw: [UInt8], cut: Int = 0) -> Result<(Int, [UInt8]), HTTPResponseParser.Failure> {
        var p = HTTPResponseParser(maxHeadBytes: 4096)
        var out: [UInt8] = []
        var offset = 0
        do {
            var head: HTTPResponseParser.Head?
            while true {
                if head == nil { head = try p.readHead() }
                if let head {
                    step: while true {
                        switch try p.readBody() {
                        case .piece(let piece): out += piece
                        case .end: return .success((head.status, out))
                        case .needMore: break step
                        }
                    }
                }
                if offset >= raw.count { p.finish(); continue }
                let n = cut == 0 ? raw.count : min(cut, raw.count - offset)
                p.feed(raw[offset..<(offset + n)])
                offset += n
            }
        } catch { return .failure(error) }
    }

    static func response(_ headers: String, _ body: [UInt8]) -> [UInt8] { Array("HTTP/1.1 200 OK\r\n\(headers)\r\n\r\n".utf8) + body }
    static func response(_ headers: String, _ body: String) -> [UInt8] { response(headers, Array(body.utf8)) }

    @Test func lengthsAndChunkSizesFromTheServerAreChecked() {
        let b = Self.body, t = Self.text
        let attacks: [(String, [UInt8], String)] = [
            ("negative Content-Length", Self.response("Content-Length: -5", b), "not a length"),
            ("signed Content-Length", Self.response("Content-Length: +\(b.count)", b), "not a length"),
            ("Content-Length past Int", Self.response("Content-Length: 99999999999999999999999", b), "not a length"),
            ("Content-Length of Int.max", Self.response("Content-Length: 9223372036854775807", b), "not a length"),
            ("two different Content-Lengths", Self.response("Content-Length: \(b.count)\r\nContent-Length: 3", b), "two different"),
            ("Content-Length list that differs", Self.response("Content-Length: \(b.count), 4", b), "two different"),
            ("negative chunk size", Self.response("Transfer-Encoding: chunked", "-1\r\n\(t)\r\n0\r\n\r\n"), "no valid size"),
            ("chunk size of Int.max", Self.response("Transfer-Encoding: chunked", "7fffffffffffffff\r\n\(t)"), "no valid size"),
            ("chunk size past 64 bits", Self.response("Transfer-Encoding: chunked", "10000000000000001\r\n\(t)"), "no valid size"),
            ("chunk size with 0x", Self.response("Transfer-Encoding: chunked", "0x10\r\n\(t)"), "no valid size"),
            ("chunk longer than its size", Self.response("Transfer-Encoding: chunked", "2\r\n\(t)\r\n0\r\n\r\n"), "longer than its size"),
            ("status out of range", Array("HTTP/1.1 -200000000000000000000 OK\r\nContent-Length: 2\r\n\r\n{}".utf8), "not HTTP/1.1"),
            ("not HTTP", Array("SSH-2.0-OpenSSH_9.2\r\n\r\n".utf8), "not HTTP/1.1"),
            ("head cut short", Array("HTTP/1.1 200 OK\r\nContent-Length: 48\r\n".utf8), "closed the connection"),
            ("body cut short", Self.response("Content-Length: 100", b), "closed the connection"),
            ("endless head", Array(("HTTP/1.1 200 OK\r\nX: " + String(repeating: "A", count: 9000)).utf8), "larger than"),
            ("endless chunk line", Self.response("Transfer-Encoding: chunked", String(repeating: "0", count: 9000)), "too long"),
        ]
        for (what, raw, reason) in attacks {
            for cut in [0, 1, 7] {
                guard case .failure(let f) = Self.parse(raw, cut: cut) else { Issue.record("\(what) (pieces of \(cut)) was accepted"); continue }
                #expect(f.description.contains(reason), "\(what): \(f.description)")
            }
        }
    }

    @Test func everyLegitimateFramingIsRead() throws {
        let b = Self.body
        let t = Self.text
        let rest = String(t.dropFirst(5))
        let chunked = "5;ext=1\r\n\(t.prefix(5))\r\n\(String(rest.utf8.count, radix: 16, uppercase: true))\r\n\(rest)\r\n000\r\nX-Trailer: 1\r\n\r\n"
        let cases: [(String, [UInt8], Int)] = [
            ("Content-Length", Self.response("Content-Length: \(b.count)", b), 200),
            ("Content-Length said twice", Self.response("Content-Length: \(b.count), \(b.count)", b), 200),
            ("leading zeros", Self.response("content-length:  000\(b.count)\t", b), 200),
            ("chunked, upper-case hex, extension, trailer", Self.response("Transfer-Encoding: chunked", chunked), 200),
            ("until close", Self.response("Content-Type: application/json", b), 200),
        ]
        for (what, raw, status) in cases {
            for cut in [0, 1, 2, 3, 5, 64] {
                let r = Self.parse(raw, cut: cut)
                guard case .success(let (s, out)) = r else { Issue.record("\(what) (pieces of \(cut)): \(r)"); continue }
                #expect(s == status && out == b, "\(what) (pieces of \(cut)): \(String(decoding: out, as: UTF8.self))")
            }
        }
        // No body: 204 and 304 end at the head whatever they claim.
        let noContent = Self.parse(Array("HTTP/1.1 204 No Content\r\nContent-Length: 10\r\n\r\n".utf8))
        guard case .success(let (s, out)) = noContent else { Issue.record("\(noContent)"); return }
        #expect(s == 204 && out.isEmpty)
    }

    /// Mutated answers in random pieces: no trap, no input over a second, and the same outcome however
    /// the bytes were cut (a parser that depends on the cut loses or invents data on a real network).
    @Test func fuzzedAnswersInRandomPieces() {
        var rng = SeededRandom(seed: 0x4854_5450)
        let b = Self.body
        let seeds: [[UInt8]] = [
            Self.response("Content-Length: \(b.count)", b),
            Self.response("Transfer-Encoding: chunked", "10\r\n\(Self.text.prefix(16))\r\n\(String(b.count - 16, radix: 16))\r\n\(Self.text.dropFirst(16))\r\n0\r\n\r\n"),
            Self.response("Content-Type: text/event-stream", "id: 1\nretry: 10\ndata: {}\n\n"),
        ]
        let punctuation = Array("\r\n:;-+0123456789abcdefABCDEF ,\t".utf8)
        let n = Chaos.size(20_000, full: 2_000_000)
        var failures = 0
        for i in 0..<n {
            let input = i % 10 == 0 ? rng.bytes(rng.below(300)) : rng.mutate(seeds[rng.below(seeds.count)], punctuation: punctuation)
            let cut = 1 + rng.below(40)
            let started = ContinuousClock.now
            let whole = Self.parse(input), pieces = Self.parse(input, cut: cut)
            if ContinuousClock.now - started > .seconds(1) { Issue.record("input #\(i) took over a second"); failures += 1 }
            switch (whole, pieces) {
            case (.success(let a), .success(let b)) where a.0 == b.0 && a.1 == b.1: break
            case (.failure, .failure): break
            default:
                failures += 1
                if failures < 5 { Issue.record("input #\(i) (pieces of \(cut)) parsed differently: \(whole) vs \(pieces)") }
            }
        }
        Chaos.report("fuzz-http-response", ["iterations": .number(Double(n)), "failures": .number(Double(failures))])
    }
}
