/// An HTTP/1.1 response read as its bytes arrive: the status line and headers, then the body by
/// its framing (Content-Length, chunked, or until the connection closes). Every number in it comes
/// from the peer and is checked before use: a length is decimal digits only, a chunk size hex digits
/// only, both at most 2^60, and two different Content-Lengths are refused (RFC 9112 §6.3) — a
/// negative or overflowing length was enough to kill the daemon before this one parser existed.
/// Pure (no I/O): the MCP client and the join-URL fetcher feed it, and the fuzz tests feed it
/// arbitrary bytes cut at arbitrary places.
public struct HTTPResponseParser: Sendable {
    public struct Head: Sendable, Equatable {
        public let status: Int
        /// Names lower-cased; a repeated header keeps its last value.
        public let headers: [String: String]
    }

    public struct Failure: Error, Equatable, CustomStringConvertible {
        public let description: String
        init(_ d: String) { description = d }
    }

    public enum BodyStep: Sendable, Equatable {
        case piece([UInt8])
        /// Nothing more until more bytes arrive (or the stream ends: call `finish`).
        case needMore
        case end
    }

    /// The largest head (status line and headers) and chunk-size line accepted.
    public let maxHeadBytes: Int
    public static let maxChunkLineBytes = 4096

    private enum Body: Sendable { case length(Int), chunked(remaining: Int, afterData: Bool), trailers, untilClose, done }
    private var buffer: [UInt8] = []
    /// Bytes of `buffer` already consumed (dropped in batches, not one removeFirst per piece).
    private var start = 0
    private var parsedHead: Head?
    private var body: Body = .untilClose
    private var ended = false

    public init(maxHeadBytes: Int = 64 * 1024) { self.maxHeadBytes = maxHeadBytes }

    public mutating func feed<C: Collection>(_ bytes: C) where C.Element == UInt8 {
        if start > 0, start >= buffer.count / 2 { buffer.removeFirst(start); start = 0 }
        buffer.append(contentsOf: bytes)
    }

    /// The stream ended: whatever framing is incomplete now is an error, except a body read until close.
    public mutating func finish() { ended = true }

    public var head: Head? { parsedHead }
    private var available: Int { buffer.count - start }

    /// The head once it has arrived whole (nil: feed more).
    public mutating func readHead() throws(Failure) -> Head? {
        if let parsedHead { return parsedHead }
        guard let end = find([13, 10, 13, 10], from: start) else {
            if available >= maxHeadBytes { throw Failure("the HTTP response head is larger than \(maxHeadBytes >> 10) KiB") }
            if ended { throw Failure(available == 0 ? "the server closed the connection before answering" : "the server closed the connection in the middle of its answer's head") }
            return nil
        }
        guard end - start <= maxHeadBytes else { throw Failure("the HTTP response head is larger than \(maxHeadBytes >> 10) KiB") }
        let text = String(decoding: buffer[start..<end], as: UTF8.self)
        start = end + 4
        var lines = text.split(separator: "\r\n", omittingEmptySubsequences: false)
        let statusLine = lines.removeFirst().split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard statusLine.count >= 2, statusLine[0].hasPrefix("HTTP/1."), statusLine[1].utf8.count == 3,
              statusLine[1].utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), let status = Int(statusLine[1]) else {
            throw Failure("the server's answer is not HTTP/1.1")
        }
        var headers: [String: String] = [:]
        var length: Int?
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            let value = String(line[line.index(after: colon)...]).trimming([" ", "\t"])
            if name == "content-length" {
                // "5, 5" is one length said twice (RFC 9112 §6.3); anything else differing is refused.
                for part in value.split(separator: ",", omittingEmptySubsequences: false) {
                    guard let n = Self.decimal(String(part).trimming([" ", "\t"])) else {
                        throw Failure("the server's Content-Length \(String(value.prefix(40)).debugDescription) is not a length")
                    }
                    if let length, length != n { throw Failure("the server sent two different Content-Lengths") }
                    length = n
                }
            }
            headers[name] = value
        }
        if headers["transfer-encoding"]?.lowercased().contains("chunked") == true { body = .chunked(remaining: 0, afterData: false) }
        else if let length { body = .length(length) }
        else { body = .untilClose }
        if status == 204 || status == 304 || (100..<200).contains(status) { body = .done }
        let h = Head(status: status, headers: headers)
        parsedHead = h
        return h
    }

    /// The next piece of the body. Call after `readHead` returned a head.
    public mutating func readBody() throws(Failure) -> BodyStep {
        while true {
            switch body {
            case .done:
                return .end
            case .length(let left):
                if left == 0 { body = .done; return .end }
                if available == 0 {
                    if ended { throw Failure("the server closed the connection in the middle of its answer") }
                    return .needMore
                }
                let n = min(left, available)
                let piece = Array(buffer[start..<(start + n)])
                start += n
                body = .length(left - n)
                return .piece(piece)
            case .untilClose:
                if available == 0 { if ended { body = .done; return .end }; return .needMore }
                let piece = Array(buffer[start...])
                start = buffer.count
                return .piece(piece)
            case .chunked(let remaining, let afterData):
                if remaining > 0 {
                    if available == 0 {
                        if ended { throw Failure("the server closed the connection in the middle of a chunk") }
                        return .needMore
                    }
                    let n = min(remaining, available)
                    let piece = Array(buffer[start..<(start + n)])
                    start += n
                    body = .chunked(remaining: remaining - n, afterData: true)
                    return .piece(piece)
                }
                // The CRLF that ends a chunk's data (not before the first size line), then the next size line.
                if afterData {
                    guard let crlf = try line() else { return .needMore }
                    guard crlf.isEmpty else { throw Failure("a chunk of the server's answer is longer than its size says") }
                    body = .chunked(remaining: 0, afterData: false)
                    continue
                }
                guard let sizeLine = try line() else { return .needMore }
                let digits = sizeLine.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first.map { String($0).trimming([" ", "\t"]) } ?? ""
                guard let size = Self.hex(digits) else {
                    throw Failure("a chunk of the server's answer has no valid size (\(String(sizeLine.prefix(40)).debugDescription))")
                }
                body = size == 0 ? .trailers : .chunked(remaining: size, afterData: false)
            case .trailers:
                guard let trailer = try line() else { return .needMore }
                if trailer.isEmpty { body = .done; return .end }
            }
        }
    }

    /// One CRLF-ended line of the body (chunk sizes, trailers); nil: feed more.
    private mutating func line() throws(Failure) -> String? {
        if let i = find([13, 10], from: start) {
            guard i - start <= Self.maxChunkLineBytes else { throw Failure("a chunk header of the server's answer is too long") }
            let text = String(decoding: buffer[start..<i], as: UTF8.self)
            start = i + 2
            return text
        }
        guard available < Self.maxChunkLineBytes else { throw Failure("a chunk header of the server's answer is too long") }
        if ended { throw Failure("the server closed the connection in the middle of its answer") }
        return nil
    }

    private func find(_ needle: [UInt8], from: Int) -> Int? {
        guard buffer.count - from >= needle.count else { return nil }
        var i = from
        let last = buffer.count - needle.count
        while i <= last {
            if buffer[i] == needle[0] {
                var j = 1
                while j < needle.count, buffer[i + j] == needle[j] { j += 1 }
                if j == needle.count { return i }
            }
            i += 1
        }
        return nil
    }

    /// The largest length or chunk size accepted: far past any answer anyone reads, far below overflow.
    public static let maxLength = 1 << 60

    /// Decimal digits only (no sign, no spaces), at most `maxLength`.
    static func decimal(_ s: String) -> Int? {
        guard !s.isEmpty, s.utf8.count <= 18, s.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), let n = Int(s) else { return nil }
        return n <= maxLength ? n : nil
    }

    /// Hex digits only (no sign, no 0x), at most `maxLength`; leading zeros are fine.
    static func hex(_ s: String) -> Int? {
        let digits = s.drop(while: { $0 == "0" })
        guard !s.isEmpty, s.utf8.allSatisfy({ ($0 >= 48 && $0 <= 57) || ($0 >= 65 && $0 <= 70) || ($0 >= 97 && $0 <= 102) }) else { return nil }
        if digits.isEmpty { return 0 }
        guard digits.utf8.count <= 15, let n = Int(digits, radix: 16) else { return nil }
        return n <= maxLength ? n : nil
    }
}
