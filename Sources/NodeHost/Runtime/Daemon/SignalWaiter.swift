import Config
import Dispatch
import FoundationEssentials
import Glibc
import HostPresence
import Kit
import Registry
import Store
import Support

/// Suspends until one of the signals arrives (handled on a dispatch queue, not in a signal handler).
enum SignalWaiter {
    static func wait(for signals: [Int32]) async -> Int32 {
        await withCheckedContinuation { (c: CheckedContinuation<Int32, Never>) in
            let once = OnceFlag()
            let queue = DispatchQueue(label: "signals")
            var sources: [DispatchSourceSignal] = []
            for s in signals {
                Glibc.signal(s, SIG_IGN)
                let src = DispatchSource.makeSignalSource(signal: s, queue: queue)
                src.setEventHandler {
                    if once.claim() { c.resume(returning: s) }
                }
                src.resume()
                sources.append(src)
            }
            SignalSources.keep(sources)
        }
    }
}

extension SignalWaiter {
    /// Every arrival of `signal`, from now on (SIGHUP → reload). The signal is ignored as a
    /// process-killing default before this returns.
    static func stream(for signal: Int32) -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        Glibc.signal(signal, SIG_IGN)
        let src = DispatchSource.makeSignalSource(signal: signal, queue: DispatchQueue(label: "signal \(signal)"))
        src.setEventHandler { continuation.yield() }
        src.resume()
        SignalSources.keep([src])
        return stream
    }
}

/// Keeps signal sources alive for the process lifetime.
enum SignalSources {
    nonisolated(unsafe) private static var held: [DispatchSourceSignal] = []
    static func keep(_ s: [DispatchSourceSignal]) { held += s }
}

final class OnceFlag: @unchecked Sendable {
    private let lock = Lock()
    private var done = false
    func claim() -> Bool { lock.withLock { if done { return false }; done = true; return true } }
}
