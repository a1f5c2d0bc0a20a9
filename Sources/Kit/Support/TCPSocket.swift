import Glibc

/// A resolved address to connect to, and whether plain-text traffic to it stays off the internet.
public struct ResolvedAddress: Sendable, CustomStringConvertible {
    public let family: Int32
    let storage: [UInt8]
    public let text: String

    public var description: String { text }

    /// Loopback, RFC 1918/6598 (private, CGNAT/tailnet), link-local, ULA.
    public var isLoopbackOrPrivate: Bool { Self.isLoopbackOrPrivate(text) }

    /// Whether `s` is an IPv4 or IPv6 address in text form (not a name).
    public static func isIPLiteral(_ s: String) -> Bool {
        var a4 = in_addr(), a6 = in6_addr()
        return inet_pton(AF_INET, s, &a4) == 1 || inet_pton(AF_INET6, s, &a6) == 1
    }

    /// Whether `host` (a URL's host) is this machine: `localhost`, 127.0.0.0/8 or ::1 as
    /// numeric addresses only (a name such as "127.example" is not).
    public static func isLoopback(_ host: String) -> Bool {
        let h = host.lowercased().filter { $0 != "[" && $0 != "]" }
        if h == "localhost" || h == "::1" { return true }
        var v4 = in_addr()
        return inet_pton(AF_INET, h, &v4) == 1 && UInt32(bigEndian: v4.s_addr) >> 24 == 127
    }

    /// The same for an address in text form (IPv6 when it has a colon; a `%zone` is ignored).
    /// `sharedAddressSpace: false` leaves out 100.64/10, which is also carriers' NAT.
    public static func isLoopbackOrPrivate(_ text: String, sharedAddressSpace: Bool = true) -> Bool {
        let t = text.lowercased()
        guard t.contains(":") else {
            let p = t.split(separator: ".", omittingEmptySubsequences: false).compactMap { Int($0) }
            guard p.count == 4 else { return false }
            return p[0] == 127 || p[0] == 10 || (p[0] == 172 && (16...31).contains(p[1])) || (p[0] == 192 && p[1] == 168)
                || (sharedAddressSpace && p[0] == 100 && (64...127).contains(p[1])) || (p[0] == 169 && p[1] == 254)
        }
        if t == "::1" { return true }
        if t.hasPrefix("::ffff:") { return isLoopbackOrPrivate(String(t.dropFirst(7)), sharedAddressSpace: sharedAddressSpace) }
        return t.hasPrefix("fc") || t.hasPrefix("fd") || t.hasPrefix("fe8") || t.hasPrefix("fe9") || t.hasPrefix("fea") || t.hasPrefix("feb")
    }
}

/// Non-blocking TCP connection owned by exactly one stream; closed once. Shared by the gateway
/// transport and capabilities that speak line protocols over TCP (gpsd). A Unix stream socket
/// (`connect(unixPath:)`: a VNC server on the node's private socket) reads and writes the same way.
public final class TCPSocket: ByteStream {
    public private(set) var fd: Int32

    private init(fd: Int32) { self.fd = fd }
    deinit { close() }

    /// Takes over a connected stream socket made elsewhere (one end of a socketpair), made
    /// non-blocking as every TCPSocket is.
    public static func adopting(fd: Int32) -> TCPSocket {
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        return TCPSocket(fd: fd)
    }

    public static func resolve(host: String, port: Int) throws(TransportError) -> [ResolvedAddress] {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_family = AF_UNSPEC
        var res: UnsafeMutablePointer<addrinfo>?
        let h = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        let rc = getaddrinfo(h, String(port), &hints, &res)
        guard rc == 0, let first = res else {
            throw TransportError("cannot resolve \(host): \(String(cString: gai_strerror(rc)))")
        }
        defer { freeaddrinfo(first) }
        var out: [ResolvedAddress] = []
        var p: UnsafeMutablePointer<addrinfo>? = first
        while let ai = p {
            let len = Int(ai.pointee.ai_addrlen)
            let bytes = Array(UnsafeRawBufferPointer(start: ai.pointee.ai_addr, count: len))
            var name = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            getnameinfo(ai.pointee.ai_addr, ai.pointee.ai_addrlen, &name, socklen_t(name.count), nil, 0, NI_NUMERICHOST)
            out.append(ResolvedAddress(family: ai.pointee.ai_family, storage: bytes, text: String(cBuffer: name)))
            p = ai.pointee.ai_next
        }
        return out
    }

    /// Tries each address in turn until one connects within `timeout`.
    public static func connect(_ addresses: [ResolvedAddress], timeout: Duration) throws(TransportError) -> TCPSocket {
        var lastError = "no address"
        let deadline = ContinuousClock.now + timeout
        // Name the address only when there were several to try (callers already name the host).
        func tag(_ a: ResolvedAddress) -> String { addresses.count > 1 ? "\(a): " : "" }
        for a in addresses {
            let fd = socket(a.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            guard fd >= 0 else { lastError = String(cString: strerror(errno)); continue }
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            let rc = a.storage.withUnsafeBytes { raw in
                Glibc.connect(fd, raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(raw.count))
            }
            if rc == 0 { return TCPSocket(fd: fd) }
            guard errno == EINPROGRESS else { lastError = tag(a) + String(cString: strerror(errno)); Glibc.close(fd); continue }
            let left = deadline - .now
            if pollOnce(fd, events: Int16(POLLOUT), timeout: left) {
                var err: Int32 = 0
                var len = socklen_t(MemoryLayout<Int32>.size)
                getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len)
                if err == 0 { return TCPSocket(fd: fd) }
                lastError = tag(a) + String(cString: strerror(err))
            } else {
                lastError = tag(a) + "connect timed out"
            }
            Glibc.close(fd)
        }
        throw TransportError(lastError)
    }

    /// Connects to the Unix stream socket at `path` (a local server: no timeout is needed, the
    /// connect either succeeds or fails at once).
    public static func connect(unixPath path: String) throws(TransportError) -> TCPSocket {
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: addr.sun_path) else { throw TransportError("socket path \(path) is too long") }
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw TransportError(String(cString: strerror(errno))) }
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard rc == 0 else {
            let e = Errno.current
            Glibc.close(fd)
            throw TransportError("\(path): \(e)", errno: e)
        }
        return TCPSocket(fd: fd)
    }

    public func read(_ buf: UnsafeMutableRawBufferPointer) -> IOStep {
        let n = recv(fd, buf.baseAddress, buf.count, 0)
        if n > 0 { return .bytes(n) }
        if n == 0 { return .eof }
        if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return .wouldBlock(wantWrite: false) }
        return .failed(String(cString: strerror(errno)))
    }

    public func write(_ buf: UnsafeRawBufferPointer) -> IOStep {
        let n = send(fd, buf.baseAddress, buf.count, Int32(MSG_NOSIGNAL))
        if n >= 0 { return .bytes(n) }
        if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return .wouldBlock(wantWrite: true) }
        return .failed(String(cString: strerror(errno)))
    }

    public var hasBufferedInput: Bool { false }

    public func close() {
        if fd >= 0 { Glibc.close(fd); fd = -1 }
    }
}

/// poll() on one fd; true when ready before the timeout.
public func pollOnce(_ fd: Int32, events: Int16, timeout: Duration) -> Bool {
    var p = pollfd(fd: fd, events: events, revents: 0)
    let ms = max(0, Int32(min(timeout.milliseconds, 3_600_000)))
    while true {
        let rc = poll(&p, 1, ms)
        if rc < 0 && errno == EINTR { continue }
        return rc > 0
    }
}
