import COpenSSL
import Config
import Glibc
import Kit
import Store
import Support

public struct WebSocketOptions: Sendable {
    public var connectTimeout: Duration = .seconds(10)
    /// Largest message accepted from the peer (the gateway's pre-auth cap is 64 KiB).
    public var maxMessageBytes = 64 * 1024
    public var tls: TLSPolicy = .system
    /// Plain ws:// to a public address is refused unless this is set.
    public var allowInsecurePublic = false
    /// Extra CA bundle (tests); nil = system store.
    public var caFile: String?
    public var headers: [(String, String)] = []
    /// At most this many bytes of messages delivered and not yet `consumed`; beyond it the socket
    /// is not read, so a peer that sends faster than the consumer takes meets TCP's backpressure
    /// instead of the node's memory (a desktop stream's gateway side). nil: no window (the session,
    /// whose reader never stops).
    public var receiveWindow: Int? = nil
    public init() {}
}

public enum WebSocketEvent: Sendable, Equatable {
    case text(String)
    case binary([UInt8])
    case pong([UInt8])
    /// The connection ended: the peer's close code/reason, or our own reason for dropping it.
    case closed(code: UInt16?, reason: String)
}

public struct WebSocketError: Error, Sendable, CustomStringConvertible, Equatable {
    public enum Kind: Sendable, Equatable { case insecureURL, resolve, connect, tls, pinMismatch, untrusted, upgrade, closed }
    public let kind: Kind
    public let description: String
    init(_ kind: Kind, _ d: String) { self.kind = kind; self.description = d }
}

/// An RFC 6455 client connection. One I/O thread owns the socket (an OpenSSL session must not be
/// read and written from two threads at once): it polls the socket and a wake-up pipe, writes what
/// callers queued, and turns incoming bytes into `events`.
public final class WebSocketConnection: @unchecked Sendable {  // `stream` (a TLS or TCP stream) belongs to the I/O thread alone
    public let url: WebSocketURL
    /// The server's leaf certificate SHA-256 (wss only), for trust-on-first-use pinning.
    public let peerFingerprint: String?
    /// True when the certificate verified against the trust store (and hostname); false for a
    /// certificate accepted only by pin or trust-on-first-use.
    public let peerVerified: Bool
    public let events: AsyncStream<WebSocketEvent>

    private let stream: ByteStream
    private let continuation: AsyncStream<WebSocketEvent>.Continuation
    /// What callers and the I/O thread share.
    private struct Shared {
        var outgoing: [UInt8] = []
        var decoder: WebSocketFrameDecoder
        var state: State = .open
        var closeSentAt: ContinuousClock.Instant?
        /// Bytes the I/O thread took from `outgoing` and has not written yet.
        var unwritten = 0
        /// Bytes of text and binary messages delivered and not yet consumed (receiveWindow).
        var undelivered = 0
    }
    private let shared: Locked<Shared>
    /// Wakes the I/O thread's poll() when something was queued or the connection is closing.
    private let wakeup = Wakeup()

    private enum State { case open, closing, closed }

    // MARK: connect

    public static func connect(_ url: WebSocketURL, options: WebSocketOptions = WebSocketOptions()) async throws(WebSocketError) -> WebSocketConnection {
        // Blocking connect/handshake on its own thread, not on the cooperative pool.
        try await BlockingExecutor.run("ws-connect") { (_: CancelFlag) throws(WebSocketError) -> WebSocketConnection in
            try connectBlocking(url, options)
        }
    }

    private static func connectBlocking(_ url: WebSocketURL, _ o: WebSocketOptions) throws(WebSocketError) -> WebSocketConnection {
        let scheme = url.scheme, host = url.host
        guard scheme == "ws" || scheme == "wss", !host.isEmpty else {
            throw WebSocketError(.insecureURL, "\(url.absoluteString) is not a ws:// or wss:// URL")
        }
        let secure = scheme == "wss"
        let port = url.port ?? (secure ? 443 : 80)
        let addresses: [ResolvedAddress]
        do { addresses = try TCPSocket.resolve(host: host, port: port) } catch { throw WebSocketError(.resolve, error.description) }
        if !secure && !o.allowInsecurePublic && !addresses.allSatisfy(\.isLoopbackOrPrivate) {
            throw WebSocketError(.insecureURL,
                "refusing plain ws:// to public address \(addresses.map(\.text).joined(separator: ", ")): use wss:// (or set gateway.allowInsecure: true)")
        }
        let tcp: TCPSocket
        do { tcp = try TCPSocket.connect(addresses, timeout: o.connectTimeout) }
        catch { throw WebSocketError(.connect, "cannot connect to \(host):\(port): \(error.description)") }
        var stream: ByteStream = tcp
        var fingerprint: String?
        var verified = false
        if secure {
            let tls: TLSStream
            do { tls = try TLSStream(tcp: tcp, host: host, timeout: o.connectTimeout, caFile: o.caFile) }
            catch { throw WebSocketError(.tls, error.description) }
            guard let peer = tls.peerInfo() else { throw WebSocketError(.tls, "\(host) sent no certificate") }
            fingerprint = peer.fingerprint
            verified = peer.verifyError == nil
            // Decided before a single byte of the upgrade (which carries no secret, but still) is sent.
            switch o.tls {
            case .pinned(let pin):
                guard TLSPolicy.normalizeFingerprint(pin) == peer.fingerprint else {
                    tls.close()
                    throw WebSocketError(.pinMismatch,
                        "the certificate of \(host):\(port) does not match the pinned fingerprint (expected sha256:\(TLSPolicy.normalizeFingerprint(pin)), got sha256:\(peer.fingerprint)). If the gateway's certificate really changed, update gateway.tlsFingerprint or remove the stored pin")
                }
            case .system:
                if let why = peer.verifyError {
                    tls.close()
                    throw WebSocketError(.untrusted, "the certificate of \(host) is not trusted (\(why)); set gateway.tlsFingerprint to pin it, or allowTOFU: true")
                }
            case .trustOnFirstUse:
                break
            }
            stream = tls
        }
        var key = Crypto.randomBytes(16)
        let keyB64 = Base64.encode(key)
        key.removeAll()
        let leftover: [UInt8]
        do {
            leftover = try HTTPUpgrade.perform(stream: stream, url: url, host: host, port: port, secure: secure, key: keyB64,
                                               headers: o.headers, timeout: o.connectTimeout)
        } catch {
            stream.close()
            throw WebSocketError(.upgrade, error.description)
        }
        let conn = WebSocketConnection(url: url, stream: stream, fingerprint: fingerprint, verified: verified, maxMessageBytes: o.maxMessageBytes,
                                       receiveWindow: o.receiveWindow)
        conn.shared.withLock { $0.decoder.feed(leftover) }
        BlockingExecutor.startLoop(name: "ws-io") { conn.ioLoop() }
        return conn
    }

    private let receiveWindow: Int?

    private init(url: WebSocketURL, stream: ByteStream, fingerprint: String?, verified: Bool, maxMessageBytes: Int, receiveWindow: Int?) {
        self.receiveWindow = receiveWindow
        self.url = url
        self.stream = stream
        self.peerFingerprint = fingerprint
        self.peerVerified = verified
        shared = Locked(Shared(decoder: WebSocketFrameDecoder(maxMessageBytes: maxMessageBytes)))
        (events, continuation) = AsyncStream<WebSocketEvent>.makeStream()
    }

    // MARK: sending

    public var maxMessageBytes: Int {
        get { shared.withLock { $0.decoder.maxMessageBytes } }
        set { shared.withLock { $0.decoder.maxMessageBytes = newValue } }
    }

    /// Queues a text message. Returns false when the connection is already closing.
    @discardableResult
    public func send(text: String) -> Bool { enqueue(WebSocketFrame(opcode: .text, payload: Array(text.utf8))) }

    /// Queues a text message already in UTF-8 bytes (a frame JSONWriter built), without a copy to a String.
    @discardableResult
    public func send(textBytes: [UInt8]) -> Bool { enqueue(WebSocketFrame(opcode: .text, payload: textBytes)) }

    /// Queues a binary message. Returns false when the connection is already closing.
    @discardableResult
    public func send(binary: [UInt8]) -> Bool { enqueue(WebSocketFrame(opcode: .binary, payload: binary)) }

    /// Bytes queued (frame headers included) and not yet written to the socket: what a sender
    /// that must not outrun the peer (a desktop stream) watches, like a browser's `bufferedAmount`.
    public var bufferedBytes: Int { shared.withLock { $0.outgoing.count + $0.unwritten } }

    /// The consumer has taken `bytes` of delivered messages (receiveWindow): the socket is read
    /// again once fewer than the window wait.
    public func consumed(_ bytes: Int) {
        guard receiveWindow != nil else { return }
        shared.withLock { $0.undelivered = max(0, $0.undelivered - bytes) }
        wakeup.signal()
    }

    /// Whether the receive window is full (the socket is left unread).
    private var windowFull: Bool {
        guard let receiveWindow else { return false }
        return shared.withLock { $0.undelivered >= receiveWindow }
    }

    @discardableResult
    public func sendPing(_ payload: [UInt8] = []) -> Bool { enqueue(WebSocketFrame(opcode: .ping, payload: payload)) }

    /// Starts the closing handshake; the connection ends when the peer answers or after 2 s.
    public func close(code: UInt16 = 1000, reason: String = "") {
        var payload = [UInt8(code >> 8), UInt8(code & 0xFF)]
        payload += Array(reason.utf8.prefix(123))
        shared.withLock { s in
            guard s.state == .open else { return }
            s.outgoing += WebSocketFrame(opcode: .close, payload: payload).encoded(maskKey: Crypto.randomBytes(4))
            s.state = .closing
            s.closeSentAt = .now
        }
        wakeup.signal()
    }

    private func enqueue(_ f: WebSocketFrame) -> Bool {
        let bytes = f.encoded(maskKey: Crypto.randomBytes(4))
        let ok = shared.withLock { s -> Bool in
            guard s.state == .open else { return false }
            s.outgoing += bytes
            return true
        }
        if ok { wakeup.signal() }
        return ok
    }

    // MARK: the I/O thread

    private func ioLoop() {
        var readBuf = [UInt8](repeating: 0, count: 64 * 1024)
        var pending: [UInt8] = []
        // Bytes of `pending` already written: dropped from the front in bulk, not per write, so a
        // few MiB queued (a desktop stream) are not moved once for every socket write.
        var written = 0
        var wantWriteForRead = false
        var endReason: (UInt16?, String) = (1006, "connection lost")
        // Frames that arrived together with the upgrade response are already in the decoder.
        if let end = deliverMessages(&pending) {
            flush(pending)
            shared.withLock { $0.state = .closed }
            stream.close()
            continuation.yield(.closed(code: end.0, reason: end.1))
            continuation.finish()
            return
        }
        loop: while true {
            if written > 0 && (written == pending.count || written >= 1 << 20) {
                pending.removeFirst(written)
                written = 0
            }
            let (st, closeAt) = shared.withLock { s -> (State, ContinuousClock.Instant?) in
                if !s.outgoing.isEmpty { pending += s.outgoing; s.outgoing.removeAll(keepingCapacity: true) }
                s.unwritten = pending.count - written
                return (s.state, s.closeSentAt)
            }
            let hasPending = written < pending.count
            // Closing: the peer has 2 s to answer the close. Open: nothing is timed, so the poll
            // waits for the socket or the wake-up alone.
            var timeoutMs: Int32 = -1
            if st == .closing, let at = closeAt {
                let left = at + .seconds(2) - ContinuousClock.now
                if !hasPending, left <= .zero {
                    endReason = (1000, "closed (peer did not answer the close)")
                    break loop
                }
                timeoutMs = Wakeup.milliseconds(max(left, .milliseconds(1)))
            }
            // A full receive window: the socket is not read until the consumer takes some.
            let full = windowFull
            var fds = [pollfd(fd: stream.fd, events: full ? 0 : Int16(POLLIN), revents: 0), pollfd(fd: wakeup.fd, events: Int16(POLLIN), revents: 0)]
            if hasPending || (wantWriteForRead && !full) { fds[0].events |= Int16(POLLOUT) }
            if full || !stream.hasBufferedInput {
                let rc = poll(&fds, 2, timeoutMs)
                if rc < 0 && errno != EINTR { endReason = (1006, "poll failed"); break loop }
            } else {
                fds[0].revents = Int16(POLLIN)
            }
            if fds[1].revents != 0 { wakeup.drain() }
            // A full window leaves the socket unread, so an error or hang-up there would wake the
            // poll at once forever (poll reports them whatever was asked): the connection is lost.
            if full, fds[0].revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 {
                endReason = (1006, "connection lost while the receiver was not taking messages")
                break loop
            }
            // Write what is queued.
            if hasPending && (fds[0].revents & Int16(POLLOUT) != 0 || fds[0].revents == 0) {
                let step = pending.withUnsafeBytes { stream.write(UnsafeRawBufferPointer(rebasing: $0[written...])) }
                switch step {
                case .bytes(let n):
                    written += n
                    shared.withLock { $0.unwritten -= n }
                case .wouldBlock: break
                case .eof: endReason = (1006, "connection closed by the peer"); break loop
                case .failed(let why): endReason = (1006, why); break loop
                }
            }
            // Read what arrived.
            if !full && (fds[0].revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 || (wantWriteForRead && fds[0].revents & Int16(POLLOUT) != 0)) {
                wantWriteForRead = false
                var progressed = true
                while progressed {
                    progressed = false
                    let step = readBuf.withUnsafeMutableBytes { stream.read($0) }
                    switch step {
                    case .bytes(let n):
                        shared.withLock { $0.decoder.feed(readBuf[0..<n]) }
                        // With a window, what is read is handed on at once, and reading stops when it is full.
                        if receiveWindow != nil {
                            if let end = deliverMessages(&pending) {
                                endReason = end; if written < pending.count { flush(Array(pending[written...])) }; break loop
                            }
                            progressed = !windowFull
                        } else {
                            progressed = true
                        }
                    case .wouldBlock(let ww): wantWriteForRead = ww
                    case .eof:
                        if shared.withLock({ $0.state }) != .closing { endReason = (1006, "connection closed by the peer without a close frame") }
                        else { endReason = (1000, "closed") }
                        deliverMessages(&pending)
                        break loop
                    case .failed(let why): endReason = (1006, why); break loop
                    }
                }
                if let end = deliverMessages(&pending) { endReason = end; if written < pending.count { flush(Array(pending[written...])) }; break loop }
            }
        }
        shared.withLock { $0.state = .closed }
        stream.close()
        continuation.yield(.closed(code: endReason.0, reason: endReason.1))
        continuation.finish()
    }

    /// Hands decoded messages to `events`; returns the end reason when the connection must end.
    @discardableResult
    private func deliverMessages(_ pending: inout [UInt8]) -> (UInt16?, String)? {
        while true {
            let next: Result<WebSocketMessage?, WebSocketProtocolError> = shared.withLock { s in
                do throws(WebSocketProtocolError) { return .success(try s.decoder.next()) } catch { return .failure(error) }
            }
            switch next {
            case .success(nil): return nil
            case .success(.text(let s)?):
                if receiveWindow != nil { shared.withLock { $0.undelivered += s.utf8.count } }
                continuation.yield(.text(s))
            case .success(.binary(let b)?):
                if receiveWindow != nil { shared.withLock { $0.undelivered += b.count } }
                continuation.yield(.binary(b))
            case .success(.pong(let b)?): continuation.yield(.pong(b))
            case .success(.ping(let b)?):
                pending += WebSocketFrame(opcode: .pong, payload: b).encoded(maskKey: Crypto.randomBytes(4))
            case .success(.close(let code, let reason)?):
                let wasOpen = shared.withLock { s -> Bool in let o = s.state == .open; s.state = .closing; return o }
                if wasOpen {
                    // Echo the close (RFC 6455 §5.5.1), then end.
                    let echo = code.map { [UInt8($0 >> 8), UInt8($0 & 0xFF)] } ?? []
                    pending += WebSocketFrame(opcode: .close, payload: echo).encoded(maskKey: Crypto.randomBytes(4))
                }
                return (code ?? 1005, reason)
            case .failure(let e):
                let code = e.closeCode
                pending += WebSocketFrame(opcode: .close, payload: [UInt8(code >> 8), UInt8(code & 0xFF)]).encoded(maskKey: Crypto.randomBytes(4))
                return (code, "protocol error from the peer: \(e.description)")
            }
        }
    }

    /// Best-effort write of the final frames before the socket closes.
    private func flush(_ bytes: [UInt8]) {
        var rest = bytes
        let deadline = ContinuousClock.now + .milliseconds(500)
        while !rest.isEmpty && ContinuousClock.now < deadline {
            let step = rest.withUnsafeBytes { stream.write($0) }
            switch step {
            case .bytes(let n): rest.removeFirst(n)
            case .wouldBlock: _ = pollOnce(stream.fd, events: Int16(POLLOUT), timeout: .milliseconds(50))
            default: return
            }
        }
    }
}
