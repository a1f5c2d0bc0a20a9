import Glibc
import Kit
import Support

/// `openclaw-node mcp serve --http ADDRESS`: the same MCP server over streamable HTTP, for agents
/// that connect rather than start a program. ADDRESS is a loopback port (`127.0.0.1:8765`,
/// `[::1]:8765`, `localhost:8765`) or a Unix socket (`unix:/path`, made 0600; a client of another
/// account is refused by the kernel's word, SO_PEERCRED); with a certificate and key
/// (`capabilities.mcp.serve.tls`) also an address on the network, and then every client speaks TLS. Every request carries the bearer token
/// of `ServeToken`; a browser page's request (an `Origin` that is not loopback) is refused, so a
/// web page cannot reach the node through the agent's browser (DNS rebinding). One endpoint,
/// `/mcp`: POST a message, answered as `application/json`; DELETE ends the session; GET (a stream
/// the server would push on) is 405 — this server sends nothing unasked.
enum McpHTTPServe {
    static let maxBody = 16 << 20
    /// A client that sends nothing for this long is closed (its thread is freed).
    static let idleMs: Int32 = 60_000
    /// A TLS client that has not finished its handshake by then is closed.
    static let handshakeTimeout: Duration = .seconds(10)
    static let maxConnections = 32

    typealias Address = LocalServerAddress


    /// Listens until the process is stopped (SIGTERM ends it; a Unix socket left behind is taken
    /// over by the next start when nothing answers on it); nonzero when it cannot listen.
    static func run(address: Address, token: String, tls: (any TLSServerIdentity)?,
                    makeServer: @escaping @Sendable () -> McpToolServer, log: Logger) async -> Int32 {
        let listener: Int32
        switch address.listen() {
        case .failure(let why): log.error(why.description); return 1
        case .success(let fd): listener = fd
        }
        let scheme = tls == nil ? "http" : "https"
        log.info("serving MCP on \(scheme) \(address) (\(address.url(tls: tls != nil)))\(tls.map { ", \($0.summary)" } ?? ""); " +
                 "bearer token in the serve-token file (openclaw-node mcp config --http \(address) prints it)")
        let sessions = Sessions(makeServer: makeServer)
        let slots = ConnectionSlots()
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            BlockingExecutor.startLoop(name: "mcp-http-accept") {
                let unix: Bool
                if case .unix = address { unix = true } else { unix = false }
                let failed = ListeningSocket.acceptClients(listener, unixPeersOnly: unix, log: log, stopped: { false }) { fd in
                    // Idle clients (between requests, or still sending one) make room for a new
                    // one: a local account without the token cannot lock the agent out.
                    guard let slot = slots.admit(fd, limit: maxConnections) else {
                        _ = try? SystemIO.live.writeAll(fd, HTTPRequestReader.response(503, "Service Unavailable", close: true), socket: true, timeoutMs: 1000)
                        Glibc.close(fd)
                        return
                    }
                    if slot.evicted { log.info("\(maxConnections) clients connected: dropped the one idle longest") }
                    BlockingExecutor.startLoop(name: "mcp-http-client") {
                        // The slot table may shut this socket down (to make room) until the slot is
                        // left, so its descriptor is closed only after: a number closed earlier could
                        // be another client's by then.
                        defer { slots.leave(slot.id); Glibc.close(fd) }
                        let wire: Wire
                        if let tls {
                            // On the client's own thread: a slow handshake holds up nobody else. The
                            // session gets a copy of the descriptor, which it closes when it ends.
                            let copy = dup(fd)
                            guard copy >= 0 else { return }
                            do throws(TransportError) { wire = .tls(try tls.accept(fd: copy, timeout: handshakeTimeout)) } catch {
                                log.info("a client's TLS handshake failed: \(error.description)")
                                return
                            }
                        } else {
                            wire = .plain(fd)
                        }
                        Connection(wire: wire, token: token, sessions: sessions, log: log, busy: { slots.setBusy(slot.id, $0) }).serve()
                        if case .tls(let stream) = wire { stream.close() }
                    }
                }
                if let failed { log.error("the listener failed: \(failed)") }
                done.resume()
            }
        }
        Glibc.close(listener)
        if case .unix(let path) = address { unlink(path) }
        sessions.endAll()
        log.info("stopped serving MCP on \(scheme) \(address)")
        return 0
    }

    /// The sessions by `Mcp-Session-Id`, each an McpToolServer of its own (its protocol version, its calls).
    final class Sessions: Sendable {
        private let makeServer: @Sendable () -> McpToolServer
        private let table = Locked<[String: McpToolServer]>([:])
        static let maxSessions = 64

        init(makeServer: @escaping @Sendable () -> McpToolServer) { self.makeServer = makeServer }

        func open() -> (id: String, server: McpToolServer)? {
            let server = makeServer()
            let id = SecureRandom.uuid()
            let added = table.withLock { t -> Bool in
                guard t.count < Self.maxSessions else { return false }
                t[id] = server
                return true
            }
            return added ? (id, server) : nil
        }

        func find(_ id: String) -> McpToolServer? { table.withLock { $0[id] } }

        func end(_ id: String) -> Bool {
            guard let server = table.withLock({ $0.removeValue(forKey: id) }) else { return false }
            server.cancelAll()
            return true
        }

        func endAll() { for s in table.withLock({ t in defer { t = [:] }; return Array(t.values) }) { s.cancelAll() } }
    }
}

extension LocalServerAddress {
    /// The URL an agent is given (a Unix socket's clients name the socket beside it; a listener on
    /// every address is reached by this machine's name, which its certificate must carry).
    func url(tls: Bool) -> String {
        let scheme = tls ? "https" : "http"
        switch self {
        case .tcp(let host, let port) where host == "0.0.0.0" || host == "::": return "\(scheme)://\(HostName.current):\(port)/mcp"
        case .tcp: return "\(scheme)://\(description)/mcp"
        case .unix: return "\(scheme)://localhost/mcp"
        }
    }
}
