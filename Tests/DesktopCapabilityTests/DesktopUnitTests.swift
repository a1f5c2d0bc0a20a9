@testable import DesktopCapability
import DesktopSession
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
        #expect(try DesktopStreamParams.decode(.value(good), command: "desktop.stream").ticket == ticket)
        func refusal(_ v: JSONValue) -> String? {
            do { _ = try DesktopStreamParams.decode(.value(v), command: "desktop.stream"); return nil } catch {
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

/// The node's own RFB server's pixel work: formats a viewer may ask for, and the changed part of
/// a frame that an incremental update sends.
struct RFBServerPixelTests {
    @Test func pixelFormatsAreWrittenAsViewersAskAndColourMapsAreRefused() {
        // B, G, R, X source pixels: one pure red, one (0x20, 0x40, 0x80).
        let source: [UInt8] = [0, 0, 255, 0, 0x80, 0x40, 0x20, 0]
        func written(_ f: RFBPixelFormat, rgbOrder: Bool = false, _ src: [UInt8] = source) -> [UInt8] {
            var out: [UInt8] = []
            src.withUnsafeBytes { f.append(rows: $0.baseAddress!, bytesPerRow: 8, x: 0, y: 0, width: 2, height: 1, rgbOrder: rgbOrder, to: &out) }
            return out
        }
        #expect(written(.serverDefault) == source)
        // vncdotool's and noVNC's 32-bit little-endian RGB with red at bit 0.
        let rgbx = RFBPixelFormat(redShift: 0, greenShift: 8, blueShift: 16)
        #expect(written(rgbx) == [255, 0, 0, 0, 0x20, 0x40, 0x80, 0])
        // RGB565 little-endian: red 0x1f at bit 11; (0x20, 0x40, 0x80) → 3, 15, 15 (scaled down, truncated).
        let rgb565 = RFBPixelFormat.parse([16, 16, 0, 1, 0, 31, 0, 63, 0, 31, 11, 5, 0, 0, 0, 0])
        #expect(rgb565 != nil)
        #expect(written(rgb565!) == [0x00, 0xf8, 0xef, 0x19])
        // A source already in R, G, B order gives the same viewer bytes.
        #expect(written(rgbx, rgbOrder: true, [255, 0, 0, 0, 0x20, 0x40, 0x80, 0]) == [255, 0, 0, 0, 0x20, 0x40, 0x80, 0])
        // Colour-map and 24-bit formats are not written.
        #expect(RFBPixelFormat.parse([8, 8, 0, 0, 0, 7, 0, 7, 0, 3, 0, 3, 6, 0, 0, 0]) == nil)
        #expect(RFBPixelFormat.parse([24, 24, 0, 1, 0, 255, 0, 255, 0, 255, 16, 8, 0, 0, 0, 0]) == nil)
    }

    @Test func anIncrementalUpdateCarriesOnlyWhatChanged() {
        let w = 16, h = 8
        let before = [UInt8](repeating: 7, count: w * h * 4)
        var after = before
        for (x, y) in [(3, 2), (9, 5)] { after[(y * w + x) * 4] = 99 }
        let rect = after.withUnsafeBytes { buf in
            RFBServerSession.changed(PipeWireFrame(base: buf.baseAddress!, width: w, height: h, bytesPerRow: w * 4, order: .bgrx, sequence: 2),
                                     against: before, within: (0, 0, w, h))
        }
        #expect(rect.map { [$0.x, $0.y, $0.w, $0.h] } == [3, 2, 7, 4])
        let none = before.withUnsafeBytes { buf in
            RFBServerSession.changed(PipeWireFrame(base: buf.baseAddress!, width: w, height: h, bytesPerRow: w * 4, order: .bgrx, sequence: 3),
                                     against: before, within: (0, 0, w, h))
        }
        #expect(none == nil)
    }
}
