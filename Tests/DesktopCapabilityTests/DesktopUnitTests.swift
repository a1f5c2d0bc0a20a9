@testable import DesktopCapability
@testable import Kit
@testable import Support
import Testing

/// The pure rules of the desktop bundle: DES and RFB's VNC authentication against published and
/// independently computed vectors, the version answer and security classification of the probe,
/// and the closed params (the stream itself runs through the daemon: DesktopStreamTests).
@Suite struct DesktopUnitTests {
    private func hex(_ s: String) -> [UInt8] {
        stride(from: 0, to: s.count, by: 2).map { UInt8(s.dropFirst($0).prefix(2), radix: 16)! }
    }

    @Test func desMatchesTheStandardsWorkedExample() {
        // The FIPS 46 worked example (key 133457799BBCDFF1) and an all-zero block.
        #expect(DESCipher.encrypt(block: hex("0123456789abcdef"), key: hex("133457799bbcdff1")) == hex("85e813540f0ab405"))
        #expect(DESCipher.encrypt(block: hex("0000000000000000"), key: hex("0000000000000000")) == hex("8ca64de9c1b123a7"))
    }

    @Test func vncResponsesMatchAnIndependentClient() {
        // Computed with vncdotool 1.4.2 (des_encrypt(_vnc_des(password), challenge)), which uses
        // the cryptography package's DES: challenge = bytes 0…15.
        let challenge = Array(UInt8(0)...15)
        #expect(VNCAuthentication.response(challenge: challenge, password: "s3cret!x") == hex("83b69a37a6de8a0904dca894779deebe"))
        #expect(VNCAuthentication.response(challenge: challenge, password: "pw") == hex("858600d9af143c9e6541d3dd92a835d0"))
        #expect(VNCAuthentication.verify(challenge: challenge, answer: hex("858600d9af143c9e6541d3dd92a835d0"), password: "pw"))
        #expect(!VNCAuthentication.verify(challenge: challenge, answer: hex("858600d9af143c9e6541d3dd92a835d1"), password: "pw"))
        // Only the first 8 bytes of a password count, as for every VNC server.
        #expect(VNCAuthentication.response(challenge: challenge, password: "s3cret!xLONGER") == VNCAuthentication.response(challenge: challenge, password: "s3cret!x"))
        #expect(LocalVNCServer.freshPassword().utf8.count == 8)
        #expect(LocalVNCServer.freshPassword() != LocalVNCServer.freshPassword())
    }

    @Test func theVersionAnswerFollowsUpstreamsProbe() {
        let reply = { (b: String) in RFBProbe.reply(toBanner: Array(b.utf8)).map { String(decoding: $0, as: UTF8.self) } }
        #expect(reply("RFB 003.008\n") == "RFB 003.008\n")
        #expect(reply("RFB 003.889\n") == "RFB 003.008\n")  // Apple's
        #expect(reply("RFB 003.007\n") == "RFB 003.007\n")
        #expect(reply("RFB 003.005\n") == "RFB 003.003\n")
        #expect(reply("RFB 003.003\n") == "RFB 003.003\n")
        #expect(reply("RFB 004.001\n") == "RFB 003.008\n")
        #expect(reply("SSH-2.0-Open") == nil)
        #expect(reply("RFB 00a.008\n") == nil)
        #expect(reply("RFB 003.008") == nil)
    }

    @Test func securityIsClassifiedByTheFirstKnownTypeInServerOrder() throws {
        #expect(try RFBProbe.classify([2]) == .vncPassword)
        #expect(try RFBProbe.classify([1, 2]) == .none)      // None first: refused by the caller
        #expect(try RFBProbe.classify([2, 1]) == .vncPassword)
        #expect(try RFBProbe.classify([30, 2]) == .ardAccount)
        #expect(try RFBProbe.classify([200, 2]) == .vncPassword)  // unknown types are skipped
        #expect(throws: DesktopStreamError.unsupportedSecurity([19, 2])) { try RFBProbe.classify([19, 2]) }
        #expect(throws: DesktopStreamError.unsupportedSecurity([200])) { try RFBProbe.classify([200]) }
    }

    @Test func paramsAreClosedWithUpstreamsMessages() throws {
        let ticket = String(repeating: "ab", count: 24)
        let good: JSONValue = ["ticket": .string(ticket), "attachPath": .string("/node-desktop/attach?ticket=" + ticket)]
        #expect(try DesktopStreamParams.decodeValidated(from: .value(good)).ticket == ticket)
        func refusal(_ v: JSONValue) -> String? {
            do { _ = try DesktopStreamParams.decodeValidated(from: .value(v)); return nil } catch {
                #expect(error.code == .unavailable)
                return error.message
            }
        }
        #expect(refusal([:]) == "INVALID_REQUEST: desktop stream ticket and attachPath required")
        #expect(refusal(["ticket": .string(ticket)]) == "INVALID_REQUEST: desktop stream ticket and attachPath required")
        #expect(refusal(["ticket": .string(ticket.uppercased()), "attachPath": .string("/node-desktop/attach?ticket=" + ticket.uppercased())])
                == "INVALID_REQUEST: desktop stream ticket and attachPath required")
        #expect(refusal(["ticket": .string(ticket), "attachPath": .string("/node-desktop/attach?ticket=" + String(repeating: "cd", count: 24))])
                == "INVALID_REQUEST: desktop stream ticket does not match attachPath")
        #expect(refusal(["ticket": .string(ticket), "attachPath": .string("//evil.example/node-desktop/attach?ticket=" + ticket)])
                == "INVALID_REQUEST: desktop stream ticket does not match attachPath")
        let extra: JSONValue = ["ticket": .string(ticket), "attachPath": .string("/node-desktop/attach?ticket=" + ticket), "timeoutMs": 5]
        #expect(refusal(extra) == "INVALID_REQUEST: desktop stream params contain unsupported fields")
    }
}
