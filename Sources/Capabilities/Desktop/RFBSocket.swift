import Glibc
import Support

/// The local VNC server's socket during the RFB handshake: reads of an exact length and whole
/// writes, each within a deadline, on a BlockingExecutor thread (the splice then takes the socket
/// over). Failures are `DesktopStreamError` with upstream's wording.
final class RFBSocket: @unchecked Sendable {  // used by one thread at a time: the handshake's, then the splice's
    let stream: TCPSocket

    init(_ stream: TCPSocket) { self.stream = stream }

    func read(exactly n: Int, until deadline: ContinuousClock.Instant, cancel: CancelFlag) throws(DesktopStreamError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: n)
        var have = 0
        while have < n {
            try cancel.check(DesktopStreamError.cancelled)
            let step = out.withUnsafeMutableBytes { stream.read(UnsafeMutableRawBufferPointer(rebasing: $0[have...])) }
            switch step {
            case .bytes(let k): have += k
            case .wouldBlock:
                let left = deadline - .now
                guard left > .zero else { throw .serverUnavailable("the VNC server did not answer in time") }
                _ = pollOnce(stream.fd, events: Int16(POLLIN), timeout: min(left, .milliseconds(100)))
            case .eof: throw .serverUnavailable("the VNC server closed the connection")
            case .failed(let why): throw .serverUnavailable(why)
            }
        }
        return out
    }

    func write(_ bytes: [UInt8], until deadline: ContinuousClock.Instant) throws(DesktopStreamError) {
        var sent = 0
        while sent < bytes.count {
            let step = bytes.withUnsafeBytes { stream.write(UnsafeRawBufferPointer(rebasing: $0[sent...])) }
            switch step {
            case .bytes(let k): sent += k
            case .wouldBlock:
                let left = deadline - .now
                guard left > .zero else { throw .serverUnavailable("the VNC server took no data in time") }
                _ = pollOnce(stream.fd, events: Int16(POLLOUT), timeout: min(left, .milliseconds(100)))
            case .eof: throw .serverUnavailable("the VNC server closed the connection")
            case .failed(let why): throw .serverUnavailable(why)
            }
        }
    }

    func close() { stream.close() }
}
