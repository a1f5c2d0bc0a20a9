import Config
import Kit
import Store
import Support

/// RFC 6455 framing, without I/O: encoding client frames and incrementally decoding server frames.
/// Pure so it can be fuzzed directly.
public enum WebSocketOpcode: UInt8, Sendable {
    case continuation = 0x0, text = 0x1, binary = 0x2, close = 0x8, ping = 0x9, pong = 0xA
    var isControl: Bool { rawValue & 0x8 != 0 }
}

public struct WebSocketFrame: Sendable, Equatable {
    public var fin: Bool
    public var opcode: WebSocketOpcode
    public var payload: [UInt8]

    public init(fin: Bool = true, opcode: WebSocketOpcode, payload: [UInt8]) {
        self.fin = fin; self.opcode = opcode; self.payload = payload
    }

    /// Encodes a frame; client frames are masked with `maskKey` (RFC 6455 §5.3), server frames are not.
    public func encoded(maskKey: [UInt8]?) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(payload.count + 14)
        out.append((fin ? 0x80 : 0) | opcode.rawValue)
        let maskBit: UInt8 = maskKey == nil ? 0 : 0x80
        let n = payload.count
        if n < 126 {
            out.append(maskBit | UInt8(n))
        } else if n <= 0xFFFF {
            out.append(maskBit | 126)
            out.append(UInt8(n >> 8)); out.append(UInt8(n & 0xFF))
        } else {
            out.append(maskBit | 127)
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8((UInt64(n) >> UInt64(shift)) & 0xFF)) }
        }
        if let key = maskKey {
            out.append(contentsOf: key)
            let start = out.count
            out.append(contentsOf: payload)
            Self.mask(&out, from: start, key: key)
        } else {
            out.append(contentsOf: payload)
        }
        return out
    }

    /// XORs `bytes[start...]` with the 4-byte key repeated, eight bytes at a time: a desktop
    /// stream masks every byte of every screen update it sends (byte by byte it cost ~3 ns each).
    static func mask(_ bytes: inout [UInt8], from start: Int, key: [UInt8]) {
        let pattern = key + key
        let wide = pattern.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }  // the key twice, in memory order
        bytes.withUnsafeMutableBytes { buf in
            guard let base = buf.baseAddress, buf.count > start else { return }
            let p = base + start, n = buf.count - start
            var i = 0
            while i + 8 <= n {
                p.storeBytes(of: p.loadUnaligned(fromByteOffset: i, as: UInt64.self) ^ wide, toByteOffset: i, as: UInt64.self)
                i += 8
            }
            while i < n {
                p.storeBytes(of: p.load(fromByteOffset: i, as: UInt8.self) ^ key[i & 3], toByteOffset: i, as: UInt8.self)
                i += 1
            }
        }
    }
}

/// Why the peer's bytes are not a valid frame stream; each maps to a close code.
public enum WebSocketProtocolError: Error, Sendable, Equatable, CustomStringConvertible {
    case reservedBits
    case unknownOpcode(UInt8)
    case maskedServerFrame
    case controlFrameTooLong
    case fragmentedControlFrame
    case unexpectedContinuation
    case expectedContinuation
    case nonMinimalLength
    case messageTooBig(limit: Int)
    case invalidUTF8
    case invalidClosePayload

    public var closeCode: UInt16 {
        switch self {
        case .messageTooBig: return 1009
        case .invalidUTF8, .invalidClosePayload: return 1007
        default: return 1002
        }
    }

    public var description: String {
        switch self {
        case .reservedBits: return "reserved bits set (no extension was negotiated)"
        case .unknownOpcode(let o): return "unknown opcode \(o)"
        case .maskedServerFrame: return "server frames must not be masked"
        case .controlFrameTooLong: return "control frame longer than 125 bytes"
        case .fragmentedControlFrame: return "fragmented control frame"
        case .unexpectedContinuation: return "continuation frame without a message to continue"
        case .expectedContinuation: return "new data frame while a fragmented message is open"
        case .nonMinimalLength: return "payload length not minimally encoded"
        case .messageTooBig(let l): return "message larger than \(l) bytes"
        case .invalidUTF8: return "text message is not valid UTF-8"
        case .invalidClosePayload: return "invalid close frame payload"
        }
    }
}

/// A complete message or control frame from the peer.
public enum WebSocketMessage: Sendable, Equatable {
    case text(String)
    case binary([UInt8])
    case ping([UInt8])
    case pong([UInt8])
    case close(code: UInt16?, reason: String)
}

/// Feeds bytes in, gets whole messages out. Enforces the message size limit on the declared length
/// before buffering the payload, so a hostile peer cannot make us allocate gigabytes.
public struct WebSocketFrameDecoder: Sendable {
    public var maxMessageBytes: Int
    private var buffer: [UInt8] = []
    private var start = 0
    private var fragments: [UInt8] = []
    private var fragmentOpcode: WebSocketOpcode?

    public init(maxMessageBytes: Int) { self.maxMessageBytes = maxMessageBytes }

    public mutating func feed(_ bytes: some Collection<UInt8>) { buffer.append(contentsOf: bytes) }

    /// The next complete message, nil when more bytes are needed.
    public mutating func next() throws(WebSocketProtocolError) -> WebSocketMessage? {
        while true {
            guard let frame = try nextFrame() else { compact(); return nil }
            if let m = try assemble(frame) { compact(); return m }
        }
    }

    private mutating func compact() {
        if start > 0 && (start > 65536 || start == buffer.count) {
            buffer.removeFirst(start)
            start = 0
        }
    }

    private mutating func nextFrame() throws(WebSocketProtocolError) -> WebSocketFrame? {
        let avail = buffer.count - start
        guard avail >= 2 else { return nil }
        let b0 = buffer[start], b1 = buffer[start + 1]
        guard b0 & 0x70 == 0 else { throw .reservedBits }
        guard let opcode = WebSocketOpcode(rawValue: b0 & 0x0F) else { throw .unknownOpcode(b0 & 0x0F) }
        let fin = b0 & 0x80 != 0
        guard b1 & 0x80 == 0 else { throw .maskedServerFrame }
        var len = UInt64(b1 & 0x7F)
        var header = 2
        if len == 126 {
            guard avail >= 4 else { return nil }
            len = UInt64(buffer[start + 2]) << 8 | UInt64(buffer[start + 3])
            guard len >= 126 else { throw .nonMinimalLength }
            header = 4
        } else if len == 127 {
            guard avail >= 10 else { return nil }
            len = 0
            for i in 0..<8 { len = len << 8 | UInt64(buffer[start + 2 + i]) }
            guard len > 0xFFFF, len >> 63 == 0 else { throw .nonMinimalLength }
            header = 10
        }
        if opcode.isControl {
            guard len <= 125 else { throw .controlFrameTooLong }
            guard fin else { throw .fragmentedControlFrame }
        } else {
            let already = opcode == .continuation ? fragments.count : 0
            guard len <= UInt64(maxMessageBytes - min(already, maxMessageBytes)) else { throw .messageTooBig(limit: maxMessageBytes) }
        }
        let total = header + Int(len)
        guard avail >= total else { return nil }
        let payload = Array(buffer[(start + header)..<(start + total)])
        start += total
        return WebSocketFrame(fin: fin, opcode: opcode, payload: payload)
    }

    private mutating func assemble(_ f: WebSocketFrame) throws(WebSocketProtocolError) -> WebSocketMessage? {
        switch f.opcode {
        case .ping: return .ping(f.payload)
        case .pong: return .pong(f.payload)
        case .close:
            if f.payload.isEmpty { return .close(code: nil, reason: "") }
            guard f.payload.count >= 2 else { throw .invalidClosePayload }
            let code = UInt16(f.payload[0]) << 8 | UInt16(f.payload[1])
            guard let reason = String(validating: f.payload[2...], as: UTF8.self) else { throw .invalidUTF8 }
            return .close(code: code, reason: reason)
        case .text, .binary:
            guard fragmentOpcode == nil else { throw .expectedContinuation }
            if f.fin { return try message(f.opcode, f.payload) }
            fragmentOpcode = f.opcode
            fragments = f.payload
            return nil
        case .continuation:
            guard let op = fragmentOpcode else { throw .unexpectedContinuation }
            fragments.append(contentsOf: f.payload)
            guard f.fin else { return nil }
            let whole = fragments
            fragments = []
            fragmentOpcode = nil
            return try message(op, whole)
        }
    }

    private func message(_ op: WebSocketOpcode, _ payload: [UInt8]) throws(WebSocketProtocolError) -> WebSocketMessage {
        if op == .binary { return .binary(payload) }
        guard let s = String(validating: payload, as: UTF8.self) else { throw .invalidUTF8 }
        return .text(s)
    }
}
