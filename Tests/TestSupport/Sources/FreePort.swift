import Foundation

/// A free TCP (or UDP) port on 127.0.0.1 (bound to port 0, read back, closed). The caller hands
/// it to a program that cannot report its own port (gpsd, dnsmasq) or uses it as a port nobody
/// listens on; another process may still take it in between, so callers retry where it matters.
func freeLoopbackPort(udp: Bool = false) throws -> Int {
    let (fd, port) = try bindLoopback(udp: udp)
    close(fd)
    return port
}

/// A socket bound to 127.0.0.1 on a port the kernel chose, and that port; the caller owns the fd.
func bindLoopback(udp: Bool = false) throws -> (fd: Int32, port: Int) {
    let fd = socket(AF_INET, Int32(udp ? SOCK_DGRAM.rawValue : SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw TestFailure("socket failed") }
    var addr = sockaddr_in()
    addr.sin_family = sa_family_t(AF_INET)
    addr.sin_addr.s_addr = inet_addr("127.0.0.1")
    addr.sin_port = 0
    var len = socklen_t(MemoryLayout<sockaddr_in>.size)
    let ok = withUnsafeMutablePointer(to: &addr) { p in
        p.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
            bind(fd, sa, len) == 0 && getsockname(fd, sa, &len) == 0
        }
    }
    guard ok else { close(fd); throw TestFailure("bind failed") }
    return (fd, Int(UInt16(bigEndian: addr.sin_port)))
}
