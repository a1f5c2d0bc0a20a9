import Testing
@testable import Transport

/// The word-at-a-time masking of client frames against RFC 6455 §5.3 done byte by byte, for
/// every length around the 8-byte steps and each header size (7, 126 and 127 length forms).
struct WebSocketMaskTests {
    @Test(arguments: [0, 1, 3, 7, 8, 9, 15, 16, 17, 125, 126, 127, 65535, 65536, 65537])
    func maskedPayloadIsTheRFCsXor(length: Int) throws {
        let key: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]
        let payload = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        let frame = WebSocketFrame(opcode: .binary, payload: payload).encoded(maskKey: key)
        let header = length < 126 ? 2 : length <= 0xFFFF ? 4 : 10
        #expect(frame.count == header + 4 + length)
        #expect(Array(frame[header..<header + 4]) == key)
        let masked = Array(frame[(header + 4)...])
        #expect(masked == payload.enumerated().map { $0.element ^ key[$0.offset % 4] })
    }
}
