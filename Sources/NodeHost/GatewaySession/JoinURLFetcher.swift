import Glibc
import Kit
import Support
import Transport

/// Fetches a one-time join URL (`GET https://<gateway>/j/<code>`, or http to loopback): the
/// gateway answers the setup payload once, then `404 {"error":"not_found"}` (docs/PROTOCOL.md
/// §3.9). Blocking; run it on BlockingExecutor. An https gateway's certificate must verify
/// against the system trust store (or OPENCLAW_NODE_CA_FILE): the answer carries a secret.
enum JoinURLFetcher {
    struct Failure: Error, CustomStringConvertible { let description: String }

    static let maxResponseBytes = 64 * 1024

    static func fetch(_ url: URLParts, timeout: Duration = .seconds(10)) throws(Failure) -> [UInt8] {
        guard let host = url.hostText.map(String.init) else { throw Failure(description: SetupCode.Invalid.code.description) }
        let secure = url.scheme == "https"
        let port = url.portText.flatMap { Int($0) } ?? (secure ? 443 : 80)
        let shown = "\(url.scheme)://\(url.authority)/j/…"
        let stream: any ByteStream
        do {
            let tcp = try TCPSocket.connect(try TCPSocket.resolve(host: host, port: port), timeout: timeout)
            if secure {
                let tls = try TLSStream(tcp: tcp, host: host, timeout: timeout, caFile: ProcessEnvironment.current["OPENCLAW_NODE_CA_FILE"])
                if let why = tls.peerInfo()?.verifyError ?? (tls.peerInfo() == nil ? "no certificate" : nil) {
                    tls.close()
                    throw Failure(description: "the certificate of \(host) is not trusted (\(why)); not sending the join code to it")
                }
                stream = tls
            } else {
                stream = tcp
            }
        } catch let e as Failure { throw e } catch {
            throw Failure(description: "cannot fetch \(shown): \(error)")
        }
        defer { stream.close() }
        let hostHeader = url.authority
        let request = Array("GET \(url.path) HTTP/1.1\r\nHost: \(hostHeader)\r\nAccept: application/json\r\nConnection: close\r\nUser-Agent: openclaw-linux-node/\(NodeVersion.version)\r\n\r\n".utf8)
        let deadline = ContinuousClock.now + timeout
        var sent = 0
        while sent < request.count {
            let step = request[sent...].withUnsafeBytes { stream.write($0) }
            switch step {
            case .bytes(let n): sent += n
            case .wouldBlock(let w): try wait(stream, write: w, deadline, shown)
            case .eof, .failed: throw Failure(description: "cannot fetch \(shown): the connection closed")
            }
        }
        // Every length and chunk size in the answer is checked by the parser (the server controls them).
        var parser = HTTPResponseParser(maxHeadBytes: maxResponseBytes)
        var body: [UInt8] = []
        var received = 0
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            var status: Int?
            do throws(HTTPResponseParser.Failure) {
                if let head = try parser.readHead() {
                    reading: while true {
                        switch try parser.readBody() {
                        case .piece(let p): body += p
                        case .end: status = head.status; break reading
                        case .needMore: break reading
                        }
                    }
                }
            } catch {
                throw Failure(description: "\(shown) sent no valid HTTP answer: \(error.description)")
            }
            if let status { return try answer((status, body), shown) }
            guard received <= maxResponseBytes else { throw Failure(description: "\(shown) answered more than \(maxResponseBytes >> 10) KiB") }
            let step = chunk.withUnsafeMutableBytes { stream.read($0) }
            switch step {
            case .bytes(let n): parser.feed(chunk[..<n]); received += n
            case .wouldBlock(let w): if !stream.hasBufferedInput { try wait(stream, write: w, deadline, shown) }
            case .eof: parser.finish()
            case .failed(let why):
                if received == 0 { throw Failure(description: "cannot fetch \(shown): \(why)") }
                parser.finish()
            }
        }
    }

    private static func wait(_ s: any ByteStream, write: Bool, _ deadline: ContinuousClock.Instant, _ shown: String) throws(Failure) {
        let left = deadline - .now
        guard left > .zero, pollOnce(s.fd, events: Int16(write ? POLLOUT : POLLIN), timeout: left) else {
            throw Failure(description: "cannot fetch \(shown): no answer in time")
        }
    }

    private static func answer(_ r: (status: Int, body: [UInt8]), _ shown: String) throws(Failure) -> [UInt8] {
        switch r.status {
        case 200: return r.body
        case 404, 410:
            throw Failure(description: "\(SetupCode.Invalid.code.description) (\(shown): the gateway does not know this join code, or it was already used)")
        default:
            throw Failure(description: "\(shown) answered HTTP \(r.status)")
        }
    }
}
