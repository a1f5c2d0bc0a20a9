import Kit
import Support
import Transport

/// A bundle's second socket to the gateway (GatewayStream): a WebSocketConnection opened against
/// the session's own origin and certificate, read by one consumer at a time.
final class GatewayStreamSocket: GatewayStream {
    /// The node accepts up to 1 MiB per message on such a socket (what upstream's host allows).
    static let maxIncomingBytes = 1 << 20
    /// Delivered and not yet taken by `next`, at most (then the socket is not read).
    static let receiveWindow = 4 << 20

    private let ws: WebSocketConnection
    /// Messages received and not yet taken, and the one caller waiting for the next.
    private struct Mailbox {
        var queue: [GatewayStreamMessage] = []
        var waiter: CheckedContinuation<GatewayStreamMessage, Never>?
        var end: GatewayStreamMessage?
    }
    private let mailbox = Locked(Mailbox())
    /// Reads the connection's events until it ends.
    private let reader: Task<Void, Never>

    private init(_ ws: WebSocketConnection) {
        self.ws = ws
        // The connection's events are read by a task of their own, so `next` needs no iterator
        // shared between callers.
        reader = Task { [mailbox] in
            for await e in ws.events {
                let m: GatewayStreamMessage
                switch e {
                case .text(let t): m = .text(t)
                case .binary(let b): m = .binary(b)
                case .pong: continue
                case .closed(let code, let reason): m = .closed(code: code, reason: reason)
                }
                Self.deliver(m, to: mailbox)
            }
            Self.deliver(.closed(code: nil, reason: "connection ended"), to: mailbox)
        }
    }

    private static func deliver(_ m: GatewayStreamMessage, to mailbox: Locked<Mailbox>) {
        let waiter = mailbox.withLock { b -> CheckedContinuation<GatewayStreamMessage, Never>? in
            if b.end != nil { return nil }
            if case .closed = m { b.end = m }
            if let w = b.waiter { b.waiter = nil; return w }
            if case .closed = m {} else { b.queue.append(m) }
            return nil
        }
        waiter?.resume(returning: m)
    }

    func next() async -> GatewayStreamMessage {
        let m = await withCheckedContinuation { (c: CheckedContinuation<GatewayStreamMessage, Never>) in
            let ready = mailbox.withLock { b -> GatewayStreamMessage? in
                if !b.queue.isEmpty { return b.queue.removeFirst() }
                if let end = b.end { return end }
                b.waiter = c
                return nil
            }
            if let ready { c.resume(returning: ready) }
        }
        // Taken: room in the receive window again.
        switch m {
        case .binary(let b): ws.consumed(b.count)
        case .text(let t): ws.consumed(t.utf8.count)
        case .closed: break
        }
        return m
    }

    func send(binary: [UInt8]) -> Bool { ws.send(binary: binary) }
    var bufferedBytes: Int { ws.bufferedBytes }
    func close(code: UInt16, reason: String) { ws.close(code: code, reason: reason) }

    /// The reader ends by itself when the connection does (its close code still reaches `next`);
    /// a socket let go before that takes the reader with it.
    deinit { reader.cancel() }

    /// Opens `pathAndQuery` on the origin of `session`'s URL. The certificate must be the one the
    /// session accepted: verified against the trust store again, or, when the session was let in by
    /// a pin or on first use, that very certificate by its fingerprint.
    static func open(_ pathAndQuery: String, session: WebSocketConnection, allowInsecurePublic: Bool) async -> Result<any GatewayStream, NodeError> {
        guard let url = session.url.sameOrigin(pathAndQuery: pathAndQuery) else {
            return .failure(NodeError(.invalidRequest, "\(pathAndQuery) is not a path on the gateway"))
        }
        var o = WebSocketOptions()
        o.maxMessageBytes = maxIncomingBytes
        // What the gateway sends waits for its consumer (a VNC server that may stop reading) at
        // most this much here; beyond it the socket is left unread (TCP pushes back).
        o.receiveWindow = receiveWindow
        o.allowInsecurePublic = allowInsecurePublic
        if let ca = ProcessEnvironment.current["OPENCLAW_NODE_CA_FILE"] { o.caFile = ca }
        if url.scheme == "wss" {
            if !session.peerVerified, let fp = session.peerFingerprint { o.tls = .pinned(fp) } else { o.tls = .system }
        }
        do {
            return .success(GatewayStreamSocket(try await WebSocketConnection.connect(url, options: o)))
        } catch {
            return .failure(NodeError(.unavailable, "the gateway refused the stream socket at \(url.path): \(error.description)"))
        }
    }
}
