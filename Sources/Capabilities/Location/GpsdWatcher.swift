import Glibc
import Support

/// What the watch thread reports, in the order it happened.
enum WatchEvent: Sendable {
    case connecting
    /// Connected and `?WATCH` sent.
    case connected
    case message(GpsdMessage, receivedAt: ContinuousClock.Instant, wallTime: WallTime)
    /// A line that is not a gpsd JSON report (a prefix of it, for the log).
    case malformed(String)
    /// An established connection ended (gpsd stopped or restarted); a reconnect follows at once.
    case disconnected(String)
    /// A connect attempt failed; the next one follows after a backoff (or `reconnectNow()`).
    case unreachable(String)
}

/// Keeps one `?WATCH` connection to gpsd open on a dedicated thread, so blocking socket work never
/// runs on the cooperative pool: connect, send the watch command, read lines, parse them, and on
/// EOF or error reconnect with a capped backoff. Lines are parsed here too (off the pool).
final class GpsdWatcher: Sendable {
    static let watchCommand = #"?WATCH={"enable":true,"json":true};"# + "\n"

    struct Timing: Sendable {
        var connectTimeout: Duration = .seconds(2)
        /// First retry delay after a failed connect; doubles up to `maxBackoff`.
        var initialBackoff: Duration = .milliseconds(250)
        var maxBackoff: Duration = .seconds(5)
        /// A connection that lasted less than this does not reset the backoff (a peer that accepts
        /// and closes at once must not make us spin).
        var stableAfter: Duration = .seconds(2)
        init() {}
    }

    let host: String
    let port: Int
    let timing: Timing
    private let emit: @Sendable (WatchEvent) -> Void
    private let wakeup = Wakeup()
    private let life = Locked((started: false, stopped: false))

    init(host: String, port: Int, timing: Timing = Timing(), emit: @escaping @Sendable (WatchEvent) -> Void) {
        self.host = host; self.port = port; self.timing = timing; self.emit = emit
    }

    func start() {
        let go: Bool = life.withLock { l in defer { l.started = true }; return !l.started && !l.stopped }
        guard go else { return }
        BlockingExecutor.startLoop(name: "gpsd-watch") { [self] in run() }
    }

    /// Ends the thread (within one poll wake-up) and closes the connection.
    func stop() {
        life.withLock { $0.stopped = true }
        wakeup.signal()
    }

    /// Cuts a backoff sleep short (a location.get is waiting for gpsd).
    func reconnectNow() { wakeup.signal() }

    private var isStopped: Bool { life.withLock { $0.stopped } }

    private func run() {
        var backoff = timing.initialBackoff
        while !isStopped {
            emit(.connecting)
            let socket: LineSocket
            do {
                socket = try LineSocket.connect(host: host, port: port, timeout: timing.connectTimeout)
                try socket.send(Self.watchCommand)
            } catch {
                emit(.unreachable(error.description))
                wakeup.sleep(backoff)
                backoff = min(backoff * 2, timing.maxBackoff)
                continue
            }
            emit(.connected)
            let since = ContinuousClock.now
            let reason = pump(socket)
            socket.close()
            if isStopped { break }
            emit(.disconnected(reason))
            if ContinuousClock.now - since >= timing.stableAfter {
                backoff = timing.initialBackoff
            } else {
                wakeup.sleep(backoff)
                backoff = min(backoff * 2, timing.maxBackoff)
            }
        }
    }

    /// Reads until EOF, an error or stop; returns why it ended.
    private func pump(_ socket: LineSocket) -> String {
        var buffer = LineBuffer()
        var dropped = 0
        while !isStopped {
            switch socket.wait(orWakeup: wakeup, timeout: .seconds(60)) {
            case .woken, .timedOut:
                continue
            case .readable:
                switch socket.read(into: &buffer) {
                case .eof: return "gpsd closed the connection"
                case .failed(let why): return why
                case .data: break
                }
                let lines = buffer.takeLines()
                let now = ContinuousClock.now, wall = WallTime.now
                for line in lines where !line.isEmpty {
                    if let m = GpsdMessage.parse(line) {
                        emit(.message(m, receivedAt: now, wallTime: wall))
                    } else {
                        emit(.malformed(String(line.prefix(80))))
                    }
                }
                if buffer.droppedLines > dropped {
                    dropped = buffer.droppedLines
                    emit(.malformed("(line longer than \(buffer.maxLineBytes) bytes dropped)"))
                }
            }
        }
        return "stopped"
    }
}
