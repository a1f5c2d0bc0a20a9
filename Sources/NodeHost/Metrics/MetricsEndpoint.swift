import Glibc
import Kit
import Support

/// The metrics endpoint: `GET /metrics` on a loopback port or a Unix socket (LocalServerAddress),
/// answered with the exposition text of the moment. No token: what it says (counts, states,
/// memory) is no secret on this machine, and a scraper such as Prometheus sends none by default;
/// a Unix socket is 0600 and serves only this account and root. A client gets 5 s to send its
/// request and at most four are served at once (a fifth is answered 503), so a stalled one cannot
/// pile up threads.
public final class MetricsEndpoint: Sendable {
    static let maxClients = 4
    static let clientTimeoutMs: Int32 = 5000

    public let address: LocalServerAddress
    private let listener: Int32
    private let metrics: NodeMetrics
    private let log: Logger
    private let clients = Locked(0)
    private let stopped = Locked(false)
    /// The scrapes being answered, each held until it ends; `stop` cancels them.
    private let serving = OwnedTasks()

    private init(address: LocalServerAddress, listener: Int32, metrics: NodeMetrics, log: Logger) {
        self.address = address; self.listener = listener; self.metrics = metrics; self.log = log
    }

    /// Listens at `address`, or says why it cannot (the address is taken, not loopback, …).
    public static func open(_ address: LocalServerAddress, metrics: NodeMetrics, log: Logger) -> Result<MetricsEndpoint, ListenFailure> {
        address.listen().map { MetricsEndpoint(address: address, listener: $0, metrics: metrics, log: log) }
    }

    /// Accepts clients on a thread of its own until `stop()`.
    public func start() {
        log.info("serving metrics on http \(address)/metrics")
        BlockingExecutor.startLoop(name: "metrics-accept") { [self] in
            let unix: Bool
            if case .unix = address { unix = true } else { unix = false }
            let failed = ListeningSocket.acceptClients(listener, unixPeersOnly: unix, log: log, stopped: { stopped.withLock { $0 } }) { fd in
                let admitted = clients.withLock { n in n < Self.maxClients ? { n += 1; return true }() : false }
                guard admitted else {
                    _ = try? SystemIO.live.writeAll(fd, HTTPRequestReader.response(503, "Service Unavailable", close: true), socket: true, timeoutMs: 1000)
                    Glibc.close(fd)
                    return
                }
                let started = serving.start { [self] in
                    await serve(fd)
                    Glibc.close(fd)
                    clients.withLock { $0 -= 1 }
                }
                if !started { Glibc.close(fd); clients.withLock { $0 -= 1 } }
            }
            if let failed { log.error("the metrics listener failed: \(failed)") }
            Glibc.close(listener)
            // After a failure; a stop removed the socket file itself, at once.
            if case .unix(let path) = address, !stopped.withLock({ $0 }) { unlink(path) }
        }
    }

    /// Stops accepting; a scrape being answered is cancelled (its client sees the connection close).
    public func stop() {
        stopped.withLock { $0 = true }
        Task { [serving] in await serving.cancelAll() }
        // accept() returns EINVAL once the socket is shut down: the loop ends and closes it.
        Glibc.shutdown(listener, Int32(SHUT_RDWR))
        // The socket file goes now, not when that thread next runs: the daemon may exit first.
        if case .unix(let path) = address { unlink(path) }
    }

    /// One request, one answer, then the connection closes (scrapers open one per scrape or
    /// keep it alive; closing is always allowed).
    private func serve(_ fd: Int32) async {
        let read = await BlockingExecutor.run("metrics-client") { (_: CancelFlag) -> Result<HTTPRequest, HTTPRequestReader.Failure> in
            var pending: [UInt8] = []
            return Result { () throws(HTTPRequestReader.Failure) -> HTTPRequest in
                try HTTPRequestReader.read(fd, pending: &pending, maxBody: 0, timeoutMs: Self.clientTimeoutMs)
            }
        }
        let answer: [UInt8]
        switch read {
        case .failure(.closed): return
        case .failure(.refused(let status, let why)): answer = Self.plain(status, why)
        case .success(let r) where r.route != "/metrics": answer = Self.plain(404, "the metrics are at /metrics")
        case .success(let r) where r.method != "GET" && r.method != "HEAD":
            answer = HTTPRequestReader.response(405, "Method Not Allowed", headers: [("Allow", "GET, HEAD")], close: true)
        case .success(let r):
            let body = Array(await metrics.text().utf8)
            var head = HTTPRequestReader.response(200, "OK", headers: [("Content-Type", MetricsText.contentType)], body: body, close: true)
            if r.method == "HEAD" { head.removeLast(body.count) }
            answer = head
        }
        _ = await BlockingExecutor.run("metrics-client") { (_: CancelFlag) in
            (try? SystemIO.live.writeAll(fd, answer, socket: true, timeoutMs: Self.clientTimeoutMs)) != nil
        }
    }

    private static func plain(_ status: Int, _ text: String) -> [UInt8] {
        HTTPRequestReader.response(status, HTTPRequestReader.reason(status), headers: [("Content-Type", "text/plain")],
                                   body: Array((text + "\n").utf8), close: true)
    }
}
