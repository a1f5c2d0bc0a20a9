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
///   At most 4 MiB wait for the server, 4 more in the queue and 4 in the attach socket's receive
///   window; beyond that the gateway is not read (TCP pushes back). A server that reads nothing
///   for 60 s ends the stream.
enum RFBSplice {
    static let maxFrameBytes = 64 * 1024
    static let highWater = 4 << 20
    static let recheck: Duration = .milliseconds(25)
    /// A server that reads nothing of what waits for it this long is taken for gone.
    static let stallLimit: Duration = .seconds(60)

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
            // Ends when cancelled (the splice is over): a Task.sleep that throws at once when
            // cancelled would otherwise turn the wait below into a busy loop, taking a thread.
            while !Task.isCancelled {
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
                    do { try await Task.sleep(for: recheck) } catch { return }
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
        /// When the bytes for the server last stopped moving (nil: all written).
        var stalledSince: ContinuousClock.Instant?
        cancel.wakes(wakeup)
        while true {
            if cancel.isCancelled { return (.cancelled, totals) }
            // Taken from the gateway's queue only while less than 4 MiB wait for the server: a server
            // that stops reading leaves it in the queue, the reader stops taking messages, and the
            // attach socket's receive window stops reading the gateway (TCP pushes back).
            let room = toServer.count - written < highWater
            let end = inbound.withLock { s -> End? in
                if room && !s.queue.isEmpty { toServer += s.queue; s.queue.removeAll(keepingCapacity: true) }
                return s.end
            }
            if written < toServer.count {
                if stalledSince == nil { stalledSince = .now }
                if let since = stalledSince, ContinuousClock.now - since > stallLimit {
                    return (.failed(.serverUnavailable("the VNC server has not read for \(stallLimit)")), totals)
                }
            } else {
                stalledSince = nil
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
            // Paused, or bytes waiting for a server that does not read: wake to re-check (the stall limit).
            let rc = poll(&fds, 2, paused || written < toServer.count ? Wakeup.milliseconds(paused ? recheck : .seconds(1)) : -1)
            if rc < 0 && errno != EINTR { return (.failed(.serverUnavailable("poll failed")), totals) }
            if fds[1].revents != 0 { wakeup.drain() }
            if fds[0].revents & Int16(POLLOUT) != 0 {
                switch toServer.withUnsafeBytes({ server.stream.write(UnsafeRawBufferPointer(rebasing: $0[written...])) }) {
                case .bytes(let n): written += n; totals.toServer += n; stalledSince = n > 0 ? nil : stalledSince
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
