import Foundation

/// A plain HTTP/1.1 GET to a server on this machine (a loopback port or a Unix socket), read to
/// the end: what a scraper sends, without a client library between the test and the bytes.
struct HTTPGetResult {
    let status: Int
    let headers: [String: String]
    let body: String
}

func httpGet(port: Int, path: String, host: String = "127.0.0.1", timeout: TimeInterval = 10) throws -> HTTPGetResult {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw TestFailure("socket failed") }
    defer { close(fd) }
    var addr = sockaddr_in()
    addr.sin_family = sa_family_t(AF_INET)
    addr.sin_addr.s_addr = inet_addr(host)
    addr.sin_port = in_port_t(UInt16(port).bigEndian)
    let ok = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } } == 0
    guard ok else { throw TestFailure("cannot connect to \(host):\(port): \(String(cString: strerror(errno)))") }
    return try exchange(fd, path: path, timeout: timeout)
}

func httpGet(unixSocket path: String, urlPath: String, timeout: TimeInterval = 10) throws -> HTTPGetResult {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw TestFailure("socket failed") }
    defer { close(fd) }
    var addr = sockaddr_un()
    addr.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &addr.sun_path) { raw in raw.copyBytes(from: Array(path.utf8) + [0]) }
    let ok = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } } == 0
    guard ok else { throw TestFailure("cannot connect to \(path): \(String(cString: strerror(errno)))") }
    return try exchange(fd, path: urlPath, timeout: timeout)
}

private func exchange(_ fd: Int32, path: String, timeout: TimeInterval) throws -> HTTPGetResult {
    var tv = timeval(tv_sec: Int(timeout), tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    let request = Array("GET \(path) HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".utf8)
    guard request.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == request.count else { throw TestFailure("send failed") }
    var data: [UInt8] = []
    var buf = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = buf.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n <= 0 { break }
        data += buf[..<n]
    }
    let text = String(decoding: data, as: UTF8.self)
    guard let split = text.range(of: "\r\n\r\n") else { throw TestFailure("no HTTP response: \(text.prefix(200))") }
    var lines = text[..<split.lowerBound].components(separatedBy: "\r\n")
    let statusLine = lines.removeFirst().split(separator: " ")
    guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw TestFailure("bad status line") }
    var headers: [String: String] = [:]
    for l in lines { if let c = l.firstIndex(of: ":") { headers[l[..<c].lowercased()] = l[l.index(after: c)...].trimmingCharacters(in: .whitespaces) } }
    return HTTPGetResult(status: status, headers: headers, body: String(text[split.upperBound...]))
}
