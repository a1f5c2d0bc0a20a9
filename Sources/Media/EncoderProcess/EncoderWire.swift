import Glibc
import Support

/// The messages between the node and its video encoder process (`openclaw-node video-encoder`):
/// a type byte, the body's length (4 bytes, little-endian), the body. Numbers in bodies are
/// little-endian Int64s, text is its length then UTF-8, samples are little-endian Int16s. The
/// node writes on the process's standard input and reads its standard output; pixels travel in a
/// shared memory file (descriptor 3), not through the pipe.
public enum EncoderMessage: UInt8, Sendable {
    // node → encoder
    case open = 1, frame, repeatFrame, audio, finish
    // encoder → node
    case opened = 10, progress, finished, failed
}

/// A frame message's format: an index into PixelLayout.allCases, or this for planar YUV 4:2:0 at
/// the output size (Y, then U, then V, rows without padding).
public enum EncoderFrameFormat {
    public static let yuv420 = -1
}

public struct EncoderWireWriter {
    public private(set) var bytes: [UInt8] = []

    public init() {}

    public mutating func int(_ v: Int64) { withUnsafeBytes(of: v.littleEndian) { bytes += $0 } }
    public mutating func int(_ v: Int) { int(Int64(v)) }
    public mutating func text(_ s: String) { int(s.utf8.count); bytes += Array(s.utf8) }
    public mutating func samples(_ s: [Int16]) {
        int(s.count)
        for v in s { withUnsafeBytes(of: v.littleEndian) { bytes += $0 } }
    }
}

public struct EncoderWireReader {
    private let bytes: [UInt8]
    private var position = 0

    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    public struct Malformed: Error {}

    public mutating func int64() throws(Malformed) -> Int64 {
        guard position + 8 <= bytes.count else { throw Malformed() }
        var v: UInt64 = 0
        for i in 0..<8 { v |= UInt64(bytes[position + i]) << (8 * UInt64(i)) }
        position += 8
        return Int64(bitPattern: v)
    }

    public mutating func int() throws(Malformed) -> Int {
        let v = try int64()
        guard let i = Int(exactly: v) else { throw Malformed() }
        return i
    }

    public mutating func text() throws(Malformed) -> String {
        let n = try int()
        guard n >= 0, position + n <= bytes.count else { throw Malformed() }
        defer { position += n }
        return String(decoding: bytes[position..<position + n], as: UTF8.self)
    }

    public mutating func samples() throws(Malformed) -> [Int16] {
        let n = try int()
        guard n >= 0, position + 2 * n <= bytes.count else { throw Malformed() }
        defer { position += 2 * n }
        return (0..<n).map { Int16(bitPattern: UInt16(bytes[position + 2 * $0]) | UInt16(bytes[position + 2 * $0 + 1]) << 8) }
    }
}

public enum EncoderWire {
    /// Bodies larger than this are refused (an MP4 fits the gateway's payload, 25 MiB of base64).
    static let maxBody = 64 * 1024 * 1024

    public static func send(_ fd: Int32, _ type: EncoderMessage, _ body: [UInt8] = []) throws(MediaError) {
        var framed: [UInt8] = [type.rawValue]
        withUnsafeBytes(of: UInt32(body.count).littleEndian) { framed += $0 }
        framed += body
        do throws(Errno) { try SystemIO.live.writeAll(fd, framed) } catch {
            throw MediaError(.codec, "the video encoder process is gone (\(error.description))")
        }
    }

    /// The next message; `timeoutMs` bounds the wait for each part.
    public static func receive(_ fd: Int32, timeoutMs: Int32? = nil) throws(MediaError) -> (type: EncoderMessage, body: [UInt8]) {
        let head: [UInt8]
        do throws(SystemIO.ReadFailure) { head = try SystemIO.live.readExactly(fd, 5, timeoutMs: timeoutMs) } catch { throw gone(error) }
        let length = Int(UInt32(head[1]) | UInt32(head[2]) << 8 | UInt32(head[3]) << 16 | UInt32(head[4]) << 24)
        guard let type = EncoderMessage(rawValue: head[0]), length <= maxBody else {
            throw MediaError(.codec, "the video encoder process sent a malformed message")
        }
        guard length > 0 else { return (type, []) }
        do throws(SystemIO.ReadFailure) { return (type, try SystemIO.live.readExactly(fd, length, timeoutMs: timeoutMs)) } catch { throw gone(error) }
    }

    private static func gone(_ error: SystemIO.ReadFailure) -> MediaError {
        MediaError(.codec, "the video encoder process is gone (\(error.description))")
    }
}
