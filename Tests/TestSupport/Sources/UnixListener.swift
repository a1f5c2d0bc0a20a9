import Foundation

/// A listening Unix socket in the test process, to see whether anything connected.
final class UnixListener {
    let fd: Int32
    init(_ path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            for (i, b) in path.utf8.prefix(raw.count - 1).enumerated() { raw[i] = b }
        }
        let ok = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
        guard ok == 0, listen(fd, 8) == 0 else { throw TestFailure("cannot listen on \(path): \(errno)") }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    }
    var hasPendingConnection: Bool {
        let c = accept(fd, nil, nil)
        if c >= 0 { Glibc.close(c); return true }
        return false
    }
    func close() { Glibc.close(fd) }
}
