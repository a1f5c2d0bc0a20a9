import Glibc

/// Why a listening socket could not be made, said for a person.
public struct ListenFailure: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// The listening socket of a small local server (`mcp serve --http`, the metrics endpoint): a
/// TCP port or a Unix socket of mode 0600, and who may talk to a Unix one.
public enum ListeningSocket {
    /// A TCP socket bound to `host` (an IPv4 or IPv6 literal) and `port`, listening.
    public static func tcp(host: String, port: Int) -> Result<Int32, ListenFailure> {
        let v6 = host.contains(":")
        let fd = socket(v6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return .failure(ListenFailure("socket: \(String(cString: strerror(errno)))")) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let bound: Int32
        if v6 {
            var a = sockaddr_in6()
            a.sin6_family = sa_family_t(AF_INET6)
            a.sin6_port = in_port_t(UInt16(port).bigEndian)
            guard inet_pton(AF_INET6, host, &a.sin6_addr) == 1 else { Glibc.close(fd); return .failure(ListenFailure("\(host) is not an IPv6 address")) }
            bound = withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) } }
        } else {
            var a = sockaddr_in()
            a.sin_family = sa_family_t(AF_INET)
            a.sin_port = in_port_t(UInt16(port).bigEndian)
            // Checked: an unparsed host would leave 0.0.0.0, every interface.
            guard inet_pton(AF_INET, host, &a.sin_addr) == 1 else { Glibc.close(fd); return .failure(ListenFailure("\(host) is not an IPv4 address")) }
            bound = withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        }
        guard bound == 0, listen(fd, 64) == 0 else {
            let why = errno == EADDRINUSE ? "another program listens there" : String(cString: strerror(errno))
            Glibc.close(fd)
            return .failure(ListenFailure("cannot listen on \(v6 ? "[\(host)]" : host):\(port): \(why)"))
        }
        return .success(fd)
    }

    /// A socket file of mode 0600 (made under umask 0177, so there is no moment it is wider).
    /// One left by a server that was killed is replaced; one that still answers is not.
    public static func unix(_ path: String) -> Result<Int32, ListenFailure> {
        var a = sockaddr_un()
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: a.sun_path) else { return .failure(ListenFailure("\(path): too long for a Unix socket path")) }
        a.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &a.sun_path) { raw in raw.copyBytes(from: bytes + [0]) }
        let size = socklen_t(MemoryLayout<sockaddr_un>.size)
        if FileSystem.exists(path) {
            guard FileSystem.isSocket(path) else { return .failure(ListenFailure("\(path) exists and is not a socket; not replacing it")) }
            let probe = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            let answered = withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(probe, $0, size) } } == 0
            Glibc.close(probe)
            if answered { return .failure(ListenFailure("something already serves on \(path) (another server of this node?)")) }
            unlink(path)
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return .failure(ListenFailure("socket: \(String(cString: strerror(errno)))")) }
        let old = umask(0o177)
        let bound = withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, size) } }
        umask(old)
        guard bound == 0, listen(fd, 64) == 0 else {
            let why = String(cString: strerror(errno))
            Glibc.close(fd)
            return .failure(ListenFailure("cannot listen on \(path): \(why)"))
        }
        return .success(fd)
    }

    /// Why the client at the other end of a Unix connection is not served: it runs as another
    /// account than this one or root (the kernel's SO_PEERCRED); nil when it may be served.
    public static func foreignPeer(_ fd: Int32) -> String? {
        guard let cred = PeerCredentials.of(fd) else { return "cannot tell who connected" }
        if cred.uid == geteuid() || cred.uid == 0 { return nil }
        return "pid \(cred.pid) runs as \(AccountName.of(cred.uid)), not as this account"
    }

    /// Accepts clients on `listener` until it fails or is shut down, each made non-blocking (every
    /// read and write then has a timeout, SystemIO) and close-on-exec (Swift's Glibc has no
    /// accept4). On a Unix socket (`unixPeersOnly`), a client of another account than this one or
    /// root is refused before `serve` sees it. Returns why it ended (nil: `stopped` said so).
    public static func acceptClients(_ listener: Int32, unixPeersOnly: Bool, log: Logger, stopped: () -> Bool,
                                     _ serve: (Int32) -> Void) -> String? {
        while true {
            let fd = accept(listener, nil, nil)
            if fd < 0 {
                if stopped() { return nil }
                if errno == EINTR || errno == ECONNABORTED || errno == EMFILE || errno == ENFILE { continue }
                return String(cString: strerror(errno))
            }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            if unixPeersOnly, let why = foreignPeer(fd) {
                log.warn("refused a client on the socket: \(why)")
                close(fd)
                continue
            }
            serve(fd)
        }
    }
}
