import Glibc

/// Random bytes from the kernel's CSPRNG (/dev/urandom, the same pool as getrandom(2), which Swift's
/// Glibc module does not export): keys, nonces, WebSocket masks. No library to load for it, so a
/// connection does not map libcrypto to mask a frame.
public enum SecureRandom {
    public static func bytes(_ n: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: n)
        let fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC)
        precondition(fd >= 0, "cannot open /dev/urandom: \(String(cString: strerror(errno)))")
        defer { close(fd) }
        var filled = 0
        out.withUnsafeMutableBytes { raw in
            while filled < n {
                let r = read(fd, raw.baseAddress! + filled, n - filled)
                if r > 0 { filled += r; continue }
                // Only EINTR is expected: nothing sensible can continue without entropy.
                precondition(r < 0 && errno == EINTR, "reading /dev/urandom failed: \(String(cString: strerror(errno)))")
            }
        }
        return out
    }

    /// A random (version 4) UUID in its lowercase text form, for invoke and run ids.
    public static func uuid() -> String {
        var b = bytes(16)
        b[6] = b[6] & 0x0F | 0x40
        b[8] = b[8] & 0x3F | 0x80
        let hex = b.map { $0.hex() }
        return hex[0..<4].joined() + "-" + hex[4..<6].joined() + "-" + hex[6..<8].joined() + "-"
            + hex[8..<10].joined() + "-" + hex[10..<16].joined()
    }
}
