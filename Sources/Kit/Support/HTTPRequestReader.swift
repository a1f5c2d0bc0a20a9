import Glibc

/// One HTTP/1.1 request read from a client of a small local server (`mcp serve --http`, the
/// metrics endpoint), within bounds: a head of at most
/// 64 KiB, a body of at most `maxBody` bytes sized by Content-Length (chunked bodies are refused:
/// MCP clients send a length), every read bounded by `timeoutMs` so a client that stalls gives up
/// its thread.
public struct HTTPRequest: Sendable {
    public let method: String
    public let path: String
    /// Header names lower-cased.
    public let headers: [String: String]
    public let body: [UInt8]

    /// The path without its query string.
    public var route: String { path.split(separator: "?", maxSplits: 1).first.map(String.init) ?? path }
}

public enum HTTPRequestReader {
    public enum Failure: Error, Equatable {
        /// The client closed (or sent nothing) before a request began: no answer is due.
        case closed
        /// A request that cannot be served: answered with this status and reason, then closed.
        case refused(Int, String)
    }

    public static let maxHead = 64 * 1024

    /// Reads the next request; `pending` holds bytes read past the previous one (keep-alive).
    public static func read(_ fd: Int32, pending: inout [UInt8], maxBody: Int, timeoutMs: Int32) throws(Failure) -> HTTPRequest {
        try read(pending: &pending, maxBody: maxBody) { chunk in (try? SystemIO.live.read(fd, into: chunk, timeoutMs: timeoutMs)) ?? 0 }
    }

    /// The same from `stream` (TLS): each wait for more bytes up to `timeoutMs`.
    public static func read(_ stream: any ByteStream, pending: inout [UInt8], maxBody: Int, timeoutMs: Int32) throws(Failure) -> HTTPRequest {
        try read(pending: &pending, maxBody: maxBody) { chunk in ByteStreamIO.readSome(stream, into: chunk, timeoutMs: timeoutMs) }
    }

    /// `source` fills a buffer and returns the count, 0 at the end, on an error or a timeout.
    private static func read(pending: inout [UInt8], maxBody: Int,
                             _ source: (UnsafeMutableRawBufferPointer) -> Int) throws(Failure) -> HTTPRequest {
        var buffer = pending
        pending = []
        var headEnd: Int?
        while headEnd == nil {
            headEnd = find(buffer, [13, 10, 13, 10])
            if headEnd != nil { break }
            if buffer.count > maxHead { throw .refused(431, "request head over 64 KiB") }
            guard let chunk = readSome(source) else {
                if buffer.isEmpty { throw .closed }
                throw .refused(408, "the request head did not arrive in time")
            }
            buffer += chunk
        }
        let head = String(decoding: buffer[..<headEnd!], as: UTF8.self)
        var lines = head.split(separator: "\r\n", omittingEmptySubsequences: false).map(String.init)
        let start = lines.removeFirst().split(separator: " ").map(String.init)
        guard start.count == 3, start[2].hasPrefix("HTTP/1.") else { throw .refused(400, "not an HTTP/1.1 request line") }
        var headers: [String: String] = [:]
        for line in lines where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { throw .refused(400, "a header line without a colon") }
            headers[line[..<colon].lowercased()] = String(line[line.index(after: colon)...]).trimmed()
        }
        if headers["transfer-encoding"] != nil { throw .refused(411, "send the body with a Content-Length") }
        let length = headers["content-length"].map { Int($0) } ?? 0
        guard let length, length >= 0 else { throw .refused(400, "a Content-Length that is not a number") }
        guard length <= maxBody else { throw .refused(413, "a body over \(maxBody >> 20) MiB") }
        var rest = Array(buffer[(headEnd! + 4)...])
        while rest.count < length {
            guard let chunk = readSome(source) else { throw .refused(408, "the request body did not arrive in time") }
            rest += chunk
        }
        pending = Array(rest[length...])
        return HTTPRequest(method: start[0], path: start[1], headers: headers, body: Array(rest[..<length]))
    }

    /// Up to 64 KiB, or nil at the end of the stream, an error or the timeout.
    private static func readSome(_ source: (UnsafeMutableRawBufferPointer) -> Int) -> [UInt8]? {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = chunk.withUnsafeMutableBytes { source($0) }
        return n > 0 ? Array(chunk[..<n]) : nil
    }

    public static func find(_ haystack: [UInt8], _ needle: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for i in 0...(haystack.count - needle.count) where haystack[i] == needle[0] && Array(haystack[i..<(i + needle.count)]) == needle {
            return i
        }
        return nil
    }

    /// A response with a body (`Connection: close` when `close`).
    public static func response(_ status: Int, _ reason: String, headers: [(String, String)] = [], body: [UInt8] = [], close: Bool = false) -> [UInt8] {
        var text = "HTTP/1.1 \(status) \(reason)\r\nContent-Length: \(body.count)\r\n"
        for (k, v) in headers { text += "\(k): \(v)\r\n" }
        if close { text += "Connection: close\r\n" }
        return Array((text + "\r\n").utf8) + body
    }

    /// The reason phrase of the statuses these servers answer with.
    public static func reason(_ status: Int) -> String {
        [200: "OK", 202: "Accepted", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
         405: "Method Not Allowed", 408: "Request Timeout", 411: "Length Required", 413: "Content Too Large",
         431: "Request Header Fields Too Large", 503: "Service Unavailable"][status] ?? "Error"
    }
}
