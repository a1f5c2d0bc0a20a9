import Config
import Glibc
import Kit
import Support

/// A connected or listening AF_UNIX stream socket. Owns its fd; closes it exactly once.
public final class UnixSocket: Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public let op: String
        public let code: Int32
        public var description: String { "\(op): \(String(cString: strerror(code)))" }
    }

    /// The fd, -1 once closed. Reads take the lock too, so a close on another thread (the
    /// server's stop) is seen, not raced.
    private let descriptor: Locked<Int32>
    public var fd: Int32 { descriptor.withLock { $0 } }

    private init(fd: Int32) { descriptor = Locked(fd) }
    deinit { close() }

    public func close() {
        descriptor.withLock { fd in
            if fd >= 0 { Glibc.close(fd); fd = -1 }
        }
    }

    public static func address(_ path: String) throws(Failure) -> sockaddr_un {
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: addr.sun_path) else { throw Failure(op: "socket path too long: \(path)", code: ENAMETOOLONG) }
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return addr
    }

    public static func connect(_ path: String) throws(Failure) -> UnixSocket {
        var addr = try address(path)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(op: "socket", code: errno) }
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard rc == 0 else { let e = errno; Glibc.close(fd); throw Failure(op: "connect \(path)", code: e) }
        return UnixSocket(fd: fd)
    }

    /// Binds with a umask so the socket is created 0600: no window where others could connect.
    public static func listen(_ path: String) throws(Failure) -> UnixSocket {
        var addr = try address(path)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(op: "socket", code: errno) }
        let old = umask(0o177)
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        umask(old)
        guard rc == 0 else { let e = errno; Glibc.close(fd); throw Failure(op: "bind \(path)", code: e) }
        chmod(path, 0o600)
        guard Glibc.listen(fd, 16) == 0 else { let e = errno; Glibc.close(fd); throw Failure(op: "listen", code: e) }
        return UnixSocket(fd: fd)
    }

    public func accept() -> UnixSocket? {
        let c = Glibc.accept(fd, nil, nil)
        guard c >= 0 else { return nil }
        _ = fcntl(c, F_SETFD, FD_CLOEXEC)
        return UnixSocket(fd: c)
    }

    /// uid of the process on the other end (SO_PEERCRED).
    public func peerUID() -> uid_t? { PeerCredentials.of(fd)?.uid }

    public func setReceiveTimeout(seconds: Int) {
        var tv = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    public func writeAll(_ data: [UInt8]) -> Bool {
        (try? SystemIO.live.writeAll(fd, data, socket: true)) != nil
    }

    /// Waits until the other end closes the connection (what arrives before is dropped), at most
    /// until `deadline`: false when the time ran out first. One poll(2) per wake-up, no polling.
    public func waitForClose(until deadline: ContinuousClock.Instant) -> Bool {
        var scratch = [UInt8](repeating: 0, count: 4096)
        while true {
            let left = deadline - .now
            guard left > .zero else { return false }
            guard pollOnce(fd, events: Int16(POLLIN), timeout: left) else { continue }
            let fd = self.fd
            let n = (try? scratch.withUnsafeMutableBytes { try SystemIO.live.read(fd, into: $0) }) ?? 0
            if n == 0 { return true }
        }
    }

    /// Reads one '\n'-terminated line (without the newline), at most `limit` bytes.
    public func readLine(limit: Int, buffer: inout [UInt8]) -> [UInt8]? {
        while true {
            if let nl = buffer.firstIndex(of: 10) {
                let line = Array(buffer[..<nl])
                buffer.removeSubrange(...nl)
                return line
            }
            if buffer.count > limit { return nil }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let n = recv(fd, &chunk, chunk.count, 0)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return nil }
            buffer.append(contentsOf: chunk[..<n])
        }
    }
}
