import Glibc

/// Reads and writes that wait, with a timeout, on a non-blocking ByteStream (plain or TLS): for a
/// server that serves each client on a thread of its own, as SystemIO does for a plain fd.
public enum ByteStreamIO {
    /// Up to `buffer.count` bytes; 0 at the end of the stream, on an error, or when nothing came
    /// within `timeoutMs`.
    public static func readSome(_ stream: any ByteStream, into buffer: UnsafeMutableRawBufferPointer, timeoutMs: Int32) -> Int {
        let deadline = ContinuousClock.now + .milliseconds(Int(timeoutMs))
        while true {
            switch stream.read(buffer) {
            case .bytes(let n): return n
            case .eof, .failed: return 0
            case .wouldBlock(let wantWrite):
                // TLS may hold decrypted bytes the fd no longer shows as readable.
                if stream.hasBufferedInput { continue }
                let left = deadline - .now
                guard left > .zero, pollOnce(stream.fd, events: Int16(wantWrite ? POLLOUT : POLLIN), timeout: left) else { return 0 }
            }
        }
    }

    /// All of `bytes`, or false on an error or when the peer took nothing for `timeoutMs`.
    public static func writeAll(_ stream: any ByteStream, _ bytes: [UInt8], timeoutMs: Int32) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let step = bytes.withUnsafeBytes { stream.write(UnsafeRawBufferPointer(rebasing: $0[sent...])) }
            switch step {
            case .bytes(let n): sent += n
            case .eof, .failed: return false
            case .wouldBlock(let wantWrite):
                guard pollOnce(stream.fd, events: Int16(wantWrite ? POLLOUT : POLLIN), timeout: .milliseconds(Int(timeoutMs))) else { return false }
            }
        }
        return true
    }
}
