import Kit
import Support

/// system.run's output, streamed to the caller as progress while the command runs (docs/PROTOCOL.md
/// "Duplex invokes"): stdout and stderr in the order they were read, each cut only between whole
/// UTF-8 sequences. The runner's thread hands bytes over without ever blocking; a task sends them
/// at the pace the gateway answers. When the caller reads slower than the command writes, at most
/// 1 MiB waits and the rest is skipped with a note in the stream (the result still has its 200 KB).
/// A gateway that answers `ignored` ends the stream; the command runs on.
final class OutputProgress: Sendable {
    static let pendingLimit = 1 << 20

    private struct State {
        var pending: [UInt8] = []
        /// Per stream (stdout, stderr): a trailing UTF-8 sequence whose rest has not been read yet.
        var partial: [[UInt8]] = [[], []]
        var skipped = 0
        var finished = false
        var stopped = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Locked(State())
    private let channel: DuplexChannel

    init(_ channel: DuplexChannel) { self.channel = channel }

    /// Bytes the command wrote on stream 0 (stdout) or 1 (stderr). Called on the runner's thread.
    func append(_ stream: Int, _ bytes: ArraySlice<UInt8>) {
        let waiter = state.withLock { s -> CheckedContinuation<Void, Never>? in
            guard !s.stopped else { return nil }
            var data = s.partial[stream] + bytes
            let whole = ProgressText.completeLength(data)
            s.partial[stream] = Array(data[whole...])
            data.removeLast(data.count - whole)
            let room = max(0, Self.pendingLimit - s.pending.count)
            if data.count > room { s.skipped += data.count }  // whole reads only, so no cut mid-character
            else { s.pending += data }
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume()
    }

    /// The command ended: what is left goes out, then the stream ends.
    func finish() {
        let waiter = state.withLock { s -> CheckedContinuation<Void, Never>? in
            s.finished = true
            s.pending += s.partial[0] + s.partial[1]
            s.partial = [[], []]
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume()
    }

    /// Sends what arrives until `finish` (or the gateway stops taking progress).
    func run() async {
        while true {
            let (bytes, skipped, finished) = await next()
            var text = String(decoding: bytes, as: UTF8.self)
            if skipped > 0 { text += "\n... (\(skipped) bytes of output not streamed: the caller read slower than the command wrote)\n" }
            if !text.isEmpty, !(await channel.write(text)) {
                state.withLock { $0.stopped = true; $0.pending = [] }
                return
            }
            if finished { return }
        }
    }

    private func next() async -> ([UInt8], Int, Bool) {
        while true {
            let taken = state.withLock { s -> ([UInt8], Int, Bool)? in
                guard !s.pending.isEmpty || s.skipped > 0 || s.finished else { return nil }
                defer { s.pending = []; s.skipped = 0 }
                return (s.pending, s.skipped, s.finished)
            }
            if let taken { return taken }
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { s -> Bool in
                    if !s.pending.isEmpty || s.skipped > 0 || s.finished { return true }
                    s.waiter = c
                    return false
                }
                if ready { c.resume() }
            }
        }
    }
}
