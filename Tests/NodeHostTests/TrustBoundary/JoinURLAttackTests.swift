import Foundation
@testable import Support
@testable import TestSupport
import Testing

/// `openclaw-node pair <join URL>` against a server that answers with broken lengths and chunk sizes
/// (a negative or overflowing chunk size used to end the CLI with SIGILL): each is refused with
/// upstream's words plus why, exit 1, and nothing is stored; a good answer from the same server still
/// pairs as far as the payload goes.
@Suite(.serialized) struct JoinURLAttackTests {
    @Test func brokenAnswersAreRefusedNotCrashedOn() throws {
        let hostile = try PythonServer(script: "hostile_http.py")
        defer { hostile.stop() }
        let node = PairCommandTests.bareNode(); defer { node.cleanup() }
        let refusals: [(String, String)] = [
            ("neg-length", "is not a length"), ("plus-length", "is not a length"), ("huge-length", "is not a length"),
            ("int-max-length", "is not a length"), ("two-lengths", "two different Content-Lengths"),
            ("neg-chunk", "no valid size"), ("overflow-chunk", "no valid size"), ("wrap-chunk", "no valid size"),
            ("short-chunk", "longer than its size"), ("status-garbage", "not HTTP/1.1"), ("head-only", "closed the connection"),
        ]
        for (answer, reason) in refusals {
            let r = try node.cli(["pair", "http://127.0.0.1:\(hostile.port)/j/\(answer)"])
            #expect(r.code == 1 && r.stderr.contains(reason), "\(answer): exit \(r.code) \(r.stderr)")
        }
        #expect(try node.status()?["gateways"]?.arrayValue?.isEmpty == true)
        // The same server with a well-formed answer: read, and judged on its payload (a gateway on a
        // port nobody listens on: the pairing itself fails, after the answer was parsed).
        let ok = try node.cli(["pair", "http://127.0.0.1:\(hostile.port)/j/ok-json", "--timeout", "2"])
        #expect(ok.code == 1 && !ok.stderr.contains("no valid HTTP answer") && ok.stderr.contains("127.0.0.1:1"), "\(ok.stderr)")
    }
}
