import Glibc

/// Our end of a pipe to a child process (Subprocess `.pipe` streams). Reads and writes are plain
/// read(2)/write(2), which report a closed peer as an error instead of raising as FileHandle does.
public final class PipeEnd: Sendable {
    public let fileDescriptor: Int32
    private let closed = Locked(false)

    public init(fileDescriptor: Int32) { self.fileDescriptor = fileDescriptor }
    deinit { close() }

    /// Whatever is available now, blocking until at least one byte or end of file (then empty).
    public var availableData: [UInt8] {
        var buf = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = read(fileDescriptor, &buf, buf.count)
            if n >= 0 { return Array(buf[0..<n]) }
            if errno != EINTR { return [] }
        }
    }

    /// Everything until end of file.
    public func readDataToEndOfFile() -> [UInt8] {
        var out: [UInt8] = []
        while true {
            let chunk = availableData
            if chunk.isEmpty { return out }
            out.append(contentsOf: chunk)
        }
    }

    public struct WriteError: Error, CustomStringConvertible { public let description: String }

    /// Writes all of `data`; throws when the reader went away (EPIPE) or on any other error.
    public func write(_ data: some Collection<UInt8>) throws(WriteError) {
        do throws(Errno) { try SystemIO.live.writeAll(fileDescriptor, Array(data)) }
        catch { throw WriteError(description: error.description) }
    }

    public func close() {
        let first = closed.withLock { closed -> Bool in defer { closed = true }; return !closed }
        if first { _ = Glibc.close(fileDescriptor) }
    }
}
