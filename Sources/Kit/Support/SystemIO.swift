import Glibc

/// Whole reads and writes on a descriptor, with the kernel's partial answers handled in one place:
/// a call interrupted by a signal (EINTR) is made again; a write that took part of the bytes
/// continues with the rest; on a non-blocking descriptor EAGAIN waits (poll) until it is ready, up
/// to `timeoutMs` per wait (nil: no limit), then fails with ETIMEDOUT. Every other error ends it.
public struct SystemIO: Sendable {
    public let calls: SystemCalls
    public init(_ calls: SystemCalls = .live) { self.calls = calls }
    public static let live = SystemIO()

    /// An end of file before the count asked for.
    public struct EndOfFile: Error, Sendable, Equatable, CustomStringConvertible {
        public let read: Int
        public var description: String { "the other end closed after \(read) bytes" }
    }

    public enum ReadFailure: Error, Sendable, Equatable, CustomStringConvertible {
        case errno(Errno)
        case endOfFile(EndOfFile)
        public var description: String {
            switch self { case .errno(let e): return e.description; case .endOfFile(let e): return e.description }
        }
    }

    /// Writes every byte of `bytes`. `socket`: send(2) with MSG_NOSIGNAL.
    public func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, socket: Bool = false, timeoutMs: Int32? = nil) throws(Errno) {
        guard var next = bytes.baseAddress, !bytes.isEmpty else { return }
        var left = bytes.count
        while left > 0 {
            let (n, e) = calls.write(fd, next, left, socket)
            if let e {
                if e == .interrupted { continue }
                if e == .wouldBlock { try wait(fd, Int16(POLLOUT), timeoutMs); continue }  // EWOULDBLOCK is EAGAIN on Linux
                throw e
            }
            next += n
            left -= n
        }
    }

    public func writeAll(_ fd: Int32, _ bytes: [UInt8], socket: Bool = false, timeoutMs: Int32? = nil) throws(Errno) {
        // withUnsafeBytes rethrows untyped: the error comes out as a value.
        let failure = bytes.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> Errno? in
            do throws(Errno) { try writeAll(fd, raw, socket: socket, timeoutMs: timeoutMs); return nil } catch { return error }
        }
        if let failure { throw failure }
    }

    /// Reads what is there, up to `into.count` bytes: 0 at end of file. One read(2), made again on
    /// EINTR (and after a wait on EAGAIN).
    public func read(_ fd: Int32, into: UnsafeMutableRawBufferPointer, timeoutMs: Int32? = nil) throws(Errno) -> Int {
        guard let base = into.baseAddress, !into.isEmpty else { return 0 }
        while true {
            let (n, e) = calls.read(fd, base, into.count)
            guard let e else { return n }
            if e == .interrupted { continue }
            if e == .wouldBlock { try wait(fd, Int16(POLLIN), timeoutMs); continue }
            throw e
        }
    }

    /// Exactly `count` bytes, or a failure: the end of file before them, or an error.
    public func readExactly(_ fd: Int32, _ count: Int, timeoutMs: Int32? = nil) throws(ReadFailure) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        var got = 0
        while got < count {
            let result = out.withUnsafeMutableBytes { (raw: UnsafeMutableRawBufferPointer) -> Result<Int, Errno> in
                do throws(Errno) { return .success(try read(fd, into: UnsafeMutableRawBufferPointer(rebasing: raw[got...]), timeoutMs: timeoutMs)) }
                catch { return .failure(error) }
            }
            switch result {
            case .failure(let e): throw .errno(e)
            case .success(0): throw .endOfFile(EndOfFile(read: got))
            case .success(let n): got += n
            }
        }
        return out
    }

    /// Waits until `fd` is ready for `events`; ETIMEDOUT after `timeoutMs`.
    private func wait(_ fd: Int32, _ events: Int16, _ timeoutMs: Int32?) throws(Errno) {
        while true {
            let (ready, e) = calls.poll(fd, events, timeoutMs ?? -1)
            if let e { if e == .interrupted { continue }; throw e }
            if ready { return }
            throw Errno.timedOut
        }
    }
}
