import Glibc
import Kit
import Support

/// The desktop stream's data phase: raw bytes both ways between the local VNC server and the
/// gateway's attach socket until either side closes or the invoke is cancelled.
///
/// - Server → gateway: one binary message per read of at most 64 KiB (the gateway's limit per
///   message on this socket). While more than 4 MiB wait unsent on the socket, the server is not
///   read (re-checked every 25 ms), so a slow viewer slows the VNC server instead of the node's
///   memory growing — RFB servers send updates only when asked, so nothing piles up behind.
/// - Gateway → server: binary messages in order; a text message ends the stream (upstream's rule).
///   At most 4 MiB wait for the server; beyond that the gateway is not read.
enum RFBSplice {
    static let maxFrameBytes = 64 * 1024
    static let highWater = 4 << 20
    static let recheck: Duration = .milliseconds(25)

    enum End: Sendable, Equatable {
        case serverClosed
        case gatewayClosed(code: UInt16?, reason: String)
        case cancelled
        case failed(DesktopStreamError)
    }

    struct Totals: Sendable, Equatable {
        var toGateway = 0, toServer = 0, frames = 0, largestFrame = 0
        /// Times the server was left unread because the gateway had 4 MiB waiting.
        var pauses = 0
    }

    private struct Inbound {
        var queue: [UInt8] = []
        var end: End?
    }

    static func run(server: RFBSocket, gateway: any GatewayStream, pending: [UInt8], cancel: CancelFlag) async -> (End, Totals) {
        let inbound = Locked(Inbound(queue: pending))
        let wakeup = Wakeup()
        cancel.wakes(wakeup)
        // The gateway side: an async reader feeding the I/O thread's queue.
        let reader = Task {
            while true {
                let msg = await gateway.next()
                var stop = false
                switch msg {
                case .binary(let b):
                    inbound.withLock { $0.queue += b }
                case .text:
                    inbound.withLock { $0.end = $0.end ?? .failed(DesktopStream.nonBinary) }
                    stop = true
                case .closed(let code, let reason):
                    inbound.withLock { $0.end = $0.end ?? .gatewayClosed(code: code, reason: reason) }
                    stop = true
                }
                wakeup.signal()
                if stop { return }
                while inbound.withLock({ $0.queue.count > highWater && $0.end == nil }) {
                    try? await Task.sleep(for: recheck)
                }
            }
        }
        let result = await BlockingExecutor.run("desktop-splice") { (flag: CancelFlag) -> (End, Totals) in
            pump(server, gateway, inbound, wakeup, CancelFlag.either(flag, cancel))
        }
        reader.cancel()
        return result
    }

    /// The I/O thread: polls the server socket and the wake-up, moves bytes, watches the limits.
    private static func pump(_ server: RFBSocket, _ gateway: any GatewayStream, _ inbound: Locked<Inbound>,
                             _ wakeup: Wakeup, _ cancel: CancelFlag) -> (End, Totals) {
        var totals = Totals()
        var buf = [UInt8](repeating: 0, count: maxFrameBytes)
        var toServer: [UInt8] = []
        var written = 0
        var paused = false
        cancel.wakes(wakeup)
        while true {
            if cancel.isCancelled { return (.cancelled, totals) }
            let end = inbound.withLock { s -> End? in
                if !s.queue.isEmpty { toServer += s.queue; s.queue.removeAll(keepingCapacity: true) }
                return s.end
            }
            if written > 0 && (written == toServer.count || written >= 1 << 20) { toServer.removeFirst(written); written = 0 }
            // The viewer is gone (or broke the rules): what it sent last no longer matters.
            if let end { return (end, totals) }
            let full = gateway.bufferedBytes > highWater
            if full && !paused { totals.pauses += 1 }
            paused = full
            var fds = [pollfd(fd: server.stream.fd, events: 0, revents: 0), pollfd(fd: wakeup.fd, events: Int16(POLLIN), revents: 0)]
            if !paused { fds[0].events |= Int16(POLLIN) }
            if written < toServer.count { fds[0].events |= Int16(POLLOUT) }
            let rc = poll(&fds, 2, paused ? Wakeup.milliseconds(recheck) : -1)
            if rc < 0 && errno != EINTR { return (.failed(.serverUnavailable("poll failed")), totals) }
            if fds[1].revents != 0 { wakeup.drain() }
            if fds[0].revents & Int16(POLLOUT) != 0 {
                switch toServer.withUnsafeBytes({ server.stream.write(UnsafeRawBufferPointer(rebasing: $0[written...])) }) {
                case .bytes(let n): written += n; totals.toServer += n
                case .wouldBlock: break
                case .eof: return (.serverClosed, totals)
                case .failed(let why): return (.failed(.serverUnavailable(why)), totals)
                }
            }
            if fds[0].revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 && !paused {
                switch buf.withUnsafeMutableBytes({ server.stream.read($0) }) {
                case .bytes(let n):
                    guard gateway.send(binary: Array(buf[0..<n])) else {
                        return (inbound.withLock { $0.end } ?? .gatewayClosed(code: nil, reason: "the attach socket closed"), totals)
                    }
                    totals.toGateway += n; totals.frames += 1; totals.largestFrame = max(totals.largestFrame, n)
                case .wouldBlock: break
                case .eof: return (.serverClosed, totals)
                case .failed(let why): return (.failed(.serverUnavailable(why)), totals)
                }
            }
        }
    }
}
