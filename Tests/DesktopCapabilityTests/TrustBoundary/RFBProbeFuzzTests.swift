@testable import DesktopCapability
import Foundation
@testable import Kit
@testable import Support
@testable import TestSupport
import Testing

/// The RFB probe reads a VNC server's banner, security offer and refusal reason (a u32 length the
/// server chooses). Mutated and random greetings over a real loopback socket: no trap, no probe past
/// its deadline, and every refusal a DesktopStreamError — beside a real greeting that still probes.
@Suite(.serialized) struct RFBProbeFuzzTests {
    static func u32(_ n: UInt32) -> [UInt8] { [UInt8(n >> 24), UInt8(n >> 16 & 255), UInt8(n >> 8 & 255), UInt8(n & 255)] }

    static let greetings: [[UInt8]] = [
        Array("RFB 003.008\n".utf8) + [2, 2, 30],
        Array("RFB 003.003\n".utf8) + u32(2),
        Array("RFB 003.008\n".utf8) + [0] + u32(0xFFFF_FFFF) + Array("refused".utf8),
        Array("RFB 003.003\n".utf8) + u32(0) + u32(0x7FFF_FFFF) + Array("no".utf8),
        Array("RFB 003.007\n".utf8) + [255] + [UInt8](repeating: 7, count: 10),
    ]

    /// Probes whatever `greeting` says, the server end closing after it.
    static func probe(_ greeting: [UInt8], listener: Int32, port: Int) throws -> Result<RFBProbe, DesktopStreamError> {
        let client = try TCPSocket.connect(TCPSocket.resolve(host: "127.0.0.1", port: port), timeout: .seconds(2))
        let server = accept(listener, nil, nil)
        defer { close(server) }
        _ = greeting.withUnsafeBytes { send(server, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        shutdown(server, Int32(SHUT_WR))
        let socket = RFBSocket(client)
        defer { socket.close() }
        do throws(DesktopStreamError) {
            return .success(try RFBProbe.run(socket, acceptNone: false, within: .milliseconds(500), cancel: CancelFlag()))
        } catch { return .failure(error) }
    }

    @Test func mutatedGreetingsNeverTrapOrHang() throws {
        let (listener, port) = try bindLoopback()
        defer { close(listener) }
        guard listen(listener, 16) == 0 else { throw TestFailure("listen failed") }
        // The legitimate greeting first: VNC password offered, probed as such.
        guard case .success(let p) = try Self.probe(Self.greetings[0], listener: listener, port: port) else { throw TestFailure("a real greeting was refused") }
        #expect(p.auth == .vncPassword && p.offered == [2, 30])
        var rng = SeededRandom(seed: 0x5246_4250)
        let n = Chaos.size(1_500, full: 100_000)
        var failures = 0
        for i in 0..<n {
            let input = i % 8 == 0 ? rng.bytes(rng.below(40)) : rng.mutate(Self.greetings[rng.below(Self.greetings.count)],
                                                                            punctuation: Array("RFB 0.3\n\u{0}\u{FF}".utf8))
            let started = ContinuousClock.now
            _ = try Self.probe(input, listener: listener, port: port)
            if ContinuousClock.now - started > .seconds(1) {
                failures += 1
                Issue.record("greeting #\(i) took \(ContinuousClock.now - started): \(input)")
            }
        }
        Chaos.report("fuzz-rfb", ["iterations": .number(Double(n)), "failures": .number(Double(failures))])
    }
}
