import Glibc
import Kit
import Support

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
        var response: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        reading: while response.count <= maxResponseBytes {
            let step = chunk.withUnsafeMutableBytes { stream.read($0) }
            switch step {
            case .bytes(let n): response += chunk[..<n]
            case .wouldBlock(let w): if !stream.hasBufferedInput { try wait(stream, write: w, deadline, shown) }
            case .eof: break reading
            case .failed(let why): if response.isEmpty { throw Failure(description: "cannot fetch \(shown): \(why)") }; break reading
            }
            if let body = complete(response) { return try answer(body, shown) }
        }
        guard let body = complete(response, atEOF: true) else { throw Failure(description: "\(shown) sent no complete HTTP answer") }
        return try answer(body, shown)
    }

    private static func wait(_ s: any ByteStream, write: Bool, _ deadline: ContinuousClock.Instant, _ shown: String) throws(Failure) {
        let left = deadline - .now
        guard left > .zero, pollOnce(s.fd, events: Int16(write ? POLLOUT : POLLIN), timeout: left) else {
            throw Failure(description: "cannot fetch \(shown): no answer in time")
        }
    }

    /// (status, body) once the response is complete: by Content-Length, chunked end, or EOF.
    static func complete(_ r: [UInt8], atEOF: Bool = false) -> (status: Int, body: [UInt8])? {
        let sep: [UInt8] = [13, 10, 13, 10]
        guard r.count >= 4, let end = (0...(r.count - 4)).first(where: { Array(r[$0..<$0 + 4]) == sep }) else { return nil }
        let head = String(decoding: r[..<end], as: UTF8.self).split(separator: "\r\n", omittingEmptySubsequences: false)
        let parts = head.first?.split(separator: " ") ?? []
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]) else { return atEOF ? (0, []) : nil }
        var length: Int?, chunked = false
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased(), value = line[line.index(after: colon)...].trimmed()
            if name == "content-length" { length = Int(value) }
            if name == "transfer-encoding", value.lowercased().contains("chunked") { chunked = true }
        }
        let body = Array(r[(end + 4)...])
        if chunked { return dechunk(body).map { (status, $0) } ?? (atEOF ? (status, body) : nil) }
        if let length { return body.count >= length ? (status, Array(body.prefix(length))) : (atEOF ? (status, body) : nil) }
        return atEOF ? (status, body) : nil
    }

    static func dechunk(_ b: [UInt8]) -> [UInt8]? {
        var out: [UInt8] = [], i = 0
        while true {
            guard let lineEnd = (i..<max(i, b.count - 1)).first(where: { b[$0] == 13 && b[$0 + 1] == 10 }),
                  let size = Int(String(decoding: b[i..<lineEnd], as: UTF8.self).split(separator: ";").first?.trimmed() ?? "", radix: 16)
            else { return nil }
            let start = lineEnd + 2
            if size == 0 { return out }
            guard b.count >= start + size + 2 else { return nil }
            out += b[start..<start + size]
            i = start + size + 2
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
