import CSignals
import Glibc
import Support

/// The process's signals as ordinary calls on a thread of the daemon: a C handler writes each
/// signal's number to a pipe (CSignals), and the "signals" loop reads it and calls whoever routed
/// that signal. Nothing runs in signal context but the write, every thread may take the signal
/// (no mask to keep in step across threads), and there is no Dispatch.
enum SignalRouter {
    private static let handlers = Locked<[Int32: [@Sendable (Int32) -> Void]]>([:])

    /// The pipe and its reader, made on first use: the pipe's write end.
    private static let writeEnd: Int32 = {
        var fds: [Int32] = [-1, -1]
        guard csignals_open_pipe(&fds) == 0 else { fatalError("signals: pipe failed, errno \(errno)") }
        let readEnd = fds[0]
        BlockingExecutor.startLoop(name: "signals") {
            var byte: UInt8 = 0
            while true {
                let n = read(readEnd, &byte, 1)
                if n < 0 && errno == EINTR { continue }
                guard n == 1 else { return }
                let signal = Int32(byte)
                for handler in handlers.withLock({ $0[signal] ?? [] }) { handler(signal) }
            }
        }
        return fds[1]
    }()

    /// Calls `handler` on the signals thread each time `signal` arrives, from now on. The signal no
    /// longer has its default action (ending the process) once this returns.
    static func route(_ signal: Int32, to handler: @escaping @Sendable (Int32) -> Void) {
        handlers.withLock { $0[signal, default: []].append(handler) }
        guard csignals_route(signal, writeEnd) == 0 else { fatalError("signals: sigaction(\(signal)) failed, errno \(errno)") }
    }
}
