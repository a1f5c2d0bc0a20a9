import Glibc
import Kit
import Support

/// One HTTP/1.1 exchange on a connection of its own (`Connection: close`): the request out, then
/// the response's head and its body piece by piece, so an SSE stream is read as it comes. Every
/// wait is a poll(2) of at most 250 ms that also checks the deadline and the cancel flag.
final class HTTPExchange {
    struct Head { let status: Int; let headers: [String: String] }

    private let stream: any ByteStream
    private let deadline: ContinuousClock.Instant
    private let flag: CancelFlag
    private var buffer: [UInt8] = []
    private var body: BodyMode = .untilClose
    private enum BodyMode { case length(Int), chunked(remaining: Int?), untilClose, done }

    /// The largest response head read (status line and headers).
    static let maxHeadBytes = 64 * 1024

    init(streams: any NetworkStreams, url: URLParts, method: String, headers: [(String, String)], body: [UInt8],
         deadline: ContinuousClock.Instant, flag: CancelFlag) throws(McpFailure) {
        self.deadline = deadline; self.flag = flag
        let tls = url.scheme == "https"
        let port = url.port ?? (tls ? 443 : 80)
        guard let host = url.host else { throw .disconnected("the url has no host") }
        do { stream = try streams.open(host: host, port: port, tls: tls, caFile: nil, timeout: min(.seconds(10), deadline - .now)) }
        catch { throw .disconnected("cannot connect to \(url.scheme)://\(url.authority): \(error.description)") }
        var text = "\(method) \(url.path.isEmpty ? "/" : url.path)\(url.query.map { "?" + $0 } ?? "") HTTP/1.1\r\nHost: \(url.authority)\r\n"
        for (k, v) in headers { text += "\(k): \(v)\r\n" }
        text += "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        try write(Array(text.utf8) + body)
    }

    /// With a CA file for https (the server's `caFile`).
    convenience init(streams: any NetworkStreams, caFile: String?, url: URLParts, method: String, headers: [(String, String)],
                     body: [UInt8], deadline: ContinuousClock.Instant, flag: CancelFlag) throws(McpFailure) {
        try self.init(streams: CAFileStreams(inner: streams, caFile: caFile), url: url, method: method, headers: headers,
                      body: body, deadline: deadline, flag: flag)
    }

    deinit { stream.close() }
    func close() { stream.close() }

    /// Status and headers (names lower-cased).
    func readHead() throws(McpFailure) -> Head {
        var end: Int?
        while end == nil {
            if let i = Self.find([13, 10, 13, 10], in: buffer) { end = i; break }
            guard buffer.count < Self.maxHeadBytes else { throw .server("the HTTP response head is larger than 64 KiB") }
            guard try fill() else { throw .disconnected("the server closed the connection before answering") }
        }
        let headText = String(decoding: buffer[0..<end!], as: UTF8.self)
        buffer.removeFirst(end! + 4)
        var lines = headText.split(separator: "\r\n", omittingEmptySubsequences: false).map(String.init)
        let statusLine = lines.removeFirst().split(separator: " ", maxSplits: 2)
        guard statusLine.count >= 2, statusLine[0].hasPrefix("HTTP/1."), let status = Int(statusLine[1]) else {
            throw .server("the server's answer is not HTTP/1.1")
        }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimming([" ", "\t"])
        }
        if headers["transfer-encoding"]?.lowercased().contains("chunked") == true { body = .chunked(remaining: nil) }
        else if let n = headers["content-length"].flatMap({ Int($0) }) { body = .length(n) }
        else { body = .untilClose }
        if status == 204 || status == 304 || (100..<200).contains(status) { body = .done }
        return Head(status: status, headers: headers)
    }

    /// The next piece of the body; nil at its end.
    func readBody() throws(McpFailure) -> [UInt8]? {
        while true {
            switch body {
            case .done: return nil
            case .length(let left):
                if left == 0 { body = .done; return nil }
                if buffer.isEmpty, try !fill() { throw .disconnected("the server closed the connection in the middle of its answer") }
                let n = min(left, buffer.count)
                let piece = Array(buffer[0..<n]); buffer.removeFirst(n)
                body = .length(left - n)
                return piece
            case .untilClose:
                if buffer.isEmpty, try !fill() { body = .done; return nil }
                defer { buffer.removeAll(keepingCapacity: true) }
                return buffer
            case .chunked(let remaining):
                if let left = remaining, left > 0 {
                    if buffer.isEmpty, try !fill() { throw .disconnected("the server closed the connection in the middle of a chunk") }
                    let n = min(left, buffer.count)
                    let piece = Array(buffer[0..<n]); buffer.removeFirst(n)
                    body = .chunked(remaining: left - n)
                    return piece
                }
                // The CRLF after a chunk's data (not before the first chunk), then the next size line.
                if remaining == 0 { _ = try line() }
                let sizeLine = try line()
                guard let size = Int(sizeLine.split(separator: ";").first.map(String.init) ?? "", radix: 16), size >= 0 else {
                    throw .server("a chunk of the server's answer has no valid size")
                }
                if size == 0 {
                    while try !line().isEmpty {}  // trailers
                    body = .done
                    return nil
                }
                body = .chunked(remaining: size)
            }
        }
    }

    /// The whole body, refused past `limit` bytes.
    func readAll(limit: Int) throws(McpFailure) -> [UInt8] {
        var out: [UInt8] = []
        while let piece = try readBody() {
            out += piece
            guard out.count <= limit else { throw .server("the server's answer is larger than \(limit >> 20) MiB") }
        }
        return out
    }

    private func line() throws(McpFailure) -> String {
        while true {
            if let i = Self.find([13, 10], in: buffer) {
                let text = String(decoding: buffer[0..<i], as: UTF8.self)
                buffer.removeFirst(i + 2)
                return text
            }
            guard buffer.count < 4096 else { throw .server("a chunk header of the server's answer is too long") }
            guard try fill() else { throw .disconnected("the server closed the connection in the middle of its answer") }
        }
    }

    /// Reads what has arrived into the buffer; false at end of stream.
    private func fill() throws(McpFailure) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            if flag.isCancelled { throw .timeout("cancelled") }
            let step = chunk.withUnsafeMutableBytes { stream.read($0) }
            switch step {
            case .bytes(let n): buffer += chunk[0..<n]; return true
            case .eof: return false
            case .failed(let why): throw .disconnected("reading from the server: \(why)")
            case .wouldBlock(let wantWrite):
                try waitReady(write: wantWrite)
            }
        }
    }

    private func write(_ bytes: [UInt8]) throws(McpFailure) {
        var off = 0
        while off < bytes.count {
            if flag.isCancelled { throw .timeout("cancelled") }
            let step = bytes[off...].withUnsafeBytes { stream.write($0) }
            switch step {
            case .bytes(let n): off += n
            case .eof: throw .disconnected("the server closed the connection")
            case .failed(let why): throw .disconnected("writing to the server: \(why)")
            case .wouldBlock(let wantWrite): try waitReady(write: wantWrite)
            }
        }
    }

    private func waitReady(write: Bool) throws(McpFailure) {
        if !write, stream.hasBufferedInput { return }
        let left = deadline - .now
        guard left > .zero else { throw .timeout("the server did not answer in time") }
        _ = pollOnce(stream.fd, events: Int16(write ? POLLOUT : POLLIN), timeout: min(left, .milliseconds(250)))
    }

    static func find(_ needle: [UInt8], in hay: [UInt8]) -> Int? {
        guard hay.count >= needle.count else { return nil }
        var i = 0
        while i <= hay.count - needle.count {
            if hay[i] == needle[0], hay[i..<(i + needle.count)].elementsEqual(needle) { return i }
            i += 1
        }
        return nil
    }
}

/// The context's streams with one server's CA file.
private struct CAFileStreams: NetworkStreams {
    let inner: any NetworkStreams
    let caFile: String?
    func open(host: String, port: Int, tls: Bool, caFile: String?, timeout: Duration) throws(TransportError) -> any ByteStream {
        try inner.open(host: host, port: port, tls: tls, caFile: self.caFile ?? caFile, timeout: timeout)
    }
}
