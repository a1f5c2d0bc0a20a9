import Config
import Glibc
import Kit
import Store
import Support

/// The HTTP/1.1 Upgrade request and the server's 101 answer (RFC 6455 §4).
enum HTTPUpgrade {
    static let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
    static let maxHeaderBytes = 16 * 1024

    /// Returns bytes that arrived after the response headers (already WebSocket frames).
    static func perform(stream: ByteStream, url: WebSocketURL, host: String, port: Int, secure: Bool, key: String,
                        headers: [(String, String)], timeout: Duration) throws(TransportError) -> [UInt8] {
        var path = url.path.isEmpty ? "/" : url.path
        if let q = url.query { path += "?" + q }
        let defaultPort = (secure && port == 443) || (!secure && port == 80)
        let hostHeader = (host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host) + (defaultPort ? "" : ":\(port)")
        // No Origin header (it turns on browser-origin checks at the gateway) and no extensions
        // (permessage-deflate is not offered, so the server never compresses).
        var req = "GET \(path) HTTP/1.1\r\nHost: \(hostHeader)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
                  "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\nUser-Agent: openclaw-linux-node/\(NodeVersion.version)\r\n"
        for (k, v) in headers { req += "\(k): \(v)\r\n" }
        req += "\r\n"
        let deadline = ContinuousClock.now + timeout
        var out = Array(req.utf8)
        while !out.isEmpty {
            let step = out.withUnsafeBytes { stream.write($0) }
            switch step {
            case .bytes(let n): out.removeFirst(n)
            case .wouldBlock(let ww):
                guard deadline > .now else { throw TransportError("the WebSocket upgrade request could not be sent within \(timeout) (the server does not read)") }
                _ = pollOnce(stream.fd, events: Int16(ww ? POLLOUT : POLLIN), timeout: deadline - .now)
            case .eof: throw TransportError("the server closed the connection during the upgrade")
            case .failed(let why): throw TransportError(why)
            }
        }
        var buf: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        let terminator: [UInt8] = [13, 10, 13, 10]
        var headerEnd: Int?
        while headerEnd == nil {
            let step = chunk.withUnsafeMutableBytes { stream.read($0) }
            switch step {
            case .bytes(let n):
                buf += chunk[0..<n]
                if let r = find(terminator, in: buf) { headerEnd = r }
                else if buf.count > maxHeaderBytes { throw TransportError("upgrade response headers too large") }
            case .wouldBlock(let ww):
                guard deadline > .now else {
                    throw TransportError(buf.isEmpty ? "the server accepted the connection but sent nothing within \(timeout) (not an OpenClaw gateway, or hung)"
                                                     : "the server's upgrade response was still incomplete after \(timeout) (\(buf.count) bytes)")
                }
                if !stream.hasBufferedInput { _ = pollOnce(stream.fd, events: Int16(ww ? POLLOUT : POLLIN), timeout: deadline - .now) }
            case .eof: throw TransportError("the server closed the connection instead of upgrading")
            case .failed(let why): throw TransportError(why)
            }
        }
        let end = headerEnd!
        let head = String(decoding: buf[0..<end], as: UTF8.self)
        var lines = head.split(separator: "\r\n", omittingEmptySubsequences: false).map(String.init)
        let status = lines.removeFirst()
        let parts = status.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let code = Int(parts[1]) else {
            throw TransportError("not an HTTP response: \(status.prefix(80))")
        }
        var fields: [String: String] = [:]
        for l in lines {
            guard let colon = l.firstIndex(of: ":") else { continue }
            fields[l[..<colon].trimmed().lowercased()] = l[l.index(after: colon)...].trimmed()
        }
        guard code == 101 else {
            var msg = "the server answered \(status.dropFirst(9)) instead of switching to WebSocket"
            if (300..<400).contains(code), let loc = fields["location"] { msg += " (redirect to \(loc); use that URL)" }
            if code == 401 || code == 403 { msg += " (check gateway.token / gateway.password)" }
            throw TransportError(msg)
        }
        guard fields["upgrade"]?.lowercased() == "websocket",
              fields["connection"]?.lowercased().split(separator: ",").contains(where: { $0.trimmed() == "upgrade" }) == true
        else { throw TransportError("101 response without Upgrade: websocket / Connection: Upgrade") }
        let expected = Base64.encode(Crypto.sha1(Array((key + guid).utf8)))
        guard fields["sec-websocket-accept"] == expected else { throw TransportError("wrong Sec-WebSocket-Accept from the server") }
        if let ext = fields["sec-websocket-extensions"], !ext.isEmpty {
            throw TransportError("the server enabled extensions we did not offer (\(ext))")
        }
        return Array(buf[(end + 4)...])
    }

    static func find(_ needle: [UInt8], in hay: [UInt8]) -> Int? {
        guard hay.count >= needle.count else { return nil }
        for i in 0...(hay.count - needle.count) where hay[i] == needle[0] {
            if Array(hay[i..<(i + needle.count)]) == needle { return i }
        }
        return nil
    }
}
