import Glibc

/// Whole-buffer writes on a blocking file descriptor: write(2) may write less than asked (a pipe,
/// a signal), so the rest is written until all of it is, or an error other than EINTR ends it.
public enum FileDescriptorIO {
    /// nil when every byte was written, else the errno that stopped it.
    public static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Int32? {
        var off = 0
        while off < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + off, bytes.count - off) }
            if n < 0 {
                if errno == EINTR { continue }
                return errno
            }
            off += n
        }
        return nil
    }
}
