import DesktopSession
import Glibc
import Kit
import Support

/// The node's own RFB server for one stream: an RFBServerSession on its own thread, serving one
/// end of a socketpair; the stream connects the other end. Nothing listens anywhere: the only
/// way in is the fd the node holds. Stopping shuts the socket down, which ends the session (and
/// with it the desktop's: GNOME's RemoteDesktop session and screen cast, KDE's screenshot thread).
final class InProcessRFB: @unchecked Sendable {  // the fds are set once; stop is idempotent
    private let clientFD: Int32
    private let serverFD: Int32
    private let stopFlag = CancelFlag()
    private let ended = Wakeup()
    private let running = Locked(true)

    private init(clientFD: Int32, serverFD: Int32) { self.clientFD = clientFD; self.serverFD = serverFD }

    /// Serves `desktop` (made here, on the caller's thread; its server's thread uses it from then on).
    static func start(log: Logger, desktop make: () throws(DesktopStreamError) -> any RFBDesktop & Sendable) throws(DesktopStreamError) -> InProcessRFB {
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
            throw .serverUnavailable("cannot make a socket pair: \(String(cString: strerror(errno)))")
        }
        let desktop: any RFBDesktop & Sendable
        do throws(DesktopStreamError) { desktop = try make() } catch {
            close(fds[0]); close(fds[1])
            throw error
        }
        let server = InProcessRFB(clientFD: fds[0], serverFD: fds[1])
        let stop = server.stopFlag, serverEnd = fds[1]
        BlockingExecutor.start("desktop-rfb") {
            let why = RFBServerSession(fd: serverEnd, desktop: desktop, stop: stop, log: log).run()
            log.debug("the node's RFB server for \(desktop.name) ended" + (why.map { ": \($0)" } ?? ""))
            server.finished()
        }
        return server
    }

    private func finished() {
        running.withLock { $0 = false }
        ended.signal()
    }

    /// The stream's end of the pair (taken once).
    func connect() throws(DesktopStreamError) -> RFBSocket {
        RFBSocket(TCPSocket.adopting(fd: clientFD))
    }

    /// Ends the session and waits (≤ 2 s) for its thread, so GNOME's sessions are closed on return.
    func stop() {
        stopFlag.cancel()
        shutdown(serverFD, Int32(SHUT_RDWR))
        let deadline = ContinuousClock.now + .seconds(2)
        while running.withLock({ $0 }), ContinuousClock.now < deadline {
            var p = pollfd(fd: ended.fd, events: Int16(POLLIN), revents: 0)
            _ = poll(&p, 1, 100)
        }
        if !running.withLock({ $0 }) { close(serverFD) }
    }
}
