import Glibc
import Kit
import Support

/// One HTTP/1.1 exchange on a connection of its own (`Connection: close`): the request out, then
/// the response's head and its body piece by piece (HTTPResponseParser), so an SSE stream is read as it comes. Every
/// wait is a poll(2) of at most 250 ms that also checks the deadline and the cancel flag.
final class HTTPExchange {
    struct Head { let status: Int; let headers: [String: String] }

    private let stream: any ByteStream
    private let deadline: ContinuousClock.Instant
    private let flag: CancelFlag
    /// Every length and chunk size in the answer is checked there (a server controls them).
    private var parser = HTTPResponseParser(maxHeadBytes: 64 * 1024)

    init(streams: any NetworkStreams, url: URLParts, method: String, headers: [(String, String)], body: [UInt8],
         deadline: ContinuousClock.Instant, flag: CancelFlag) throws(McpFailure) {
        self.deadline = deadline; self.flag = flag
        let tls = url.scheme == "https"
        let port = url.port ?? (tls ? 443 : 80)
        guard let host = url.host else { throw .disconnected("the url has no host") }
        // Plain http is allowed to loopback only, and only to a listener of this account or root:
        // another local account can hold the port and would read the headers (a ${VAR} token).
        if !tls, let why = LoopbackListener.refusal(port: port, host: host) { throw .disconnected(why) }
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
        while true {
            let head: HTTPResponseParser.Head?
            do { head = try parser.readHead() } catch { throw Self.failure(error) }
            if let head { return Head(status: head.status, headers: head.headers) }
            if try !fill() { parser.finish() }
        }
    }

    /// The next piece of the body; nil at its end.
    func readBody() throws(McpFailure) -> [UInt8]? {
        while true {
            let step: HTTPResponseParser.BodyStep
            do { step = try parser.readBody() } catch { throw Self.failure(error) }
            switch step {
            case .piece(let bytes): return bytes
            case .end: return nil
            case .needMore: if try !fill() { parser.finish() }
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

    /// A closed connection is `disconnected`; anything else the server sent wrong is `server`.
    private static func failure(_ f: HTTPResponseParser.Failure) -> McpFailure {
        f.description.hasPrefix("the server closed") ? .disconnected(f.description) : .server(f.description)
    }

    /// Reads what has arrived into the buffer; false at end of stream.
    private func fill() throws(McpFailure) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            if flag.isCancelled { throw .timeout("cancelled") }
            let step = chunk.withUnsafeMutableBytes { stream.read($0) }
            switch step {
            case .bytes(let n): parser.feed(chunk[0..<n]); return true
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
}

/// The context's streams with one server's CA file.
private struct CAFileStreams: NetworkStreams {
    let inner: any NetworkStreams
    let caFile: String?
    func open(host: String, port: Int, tls: Bool, caFile: String?, timeout: Duration) throws(TransportError) -> any ByteStream {
        try inner.open(host: host, port: port, tls: tls, caFile: self.caFile ?? caFile, timeout: timeout)
    }
}
