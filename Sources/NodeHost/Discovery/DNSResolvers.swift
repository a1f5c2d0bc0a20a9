import CResolv
import Config
import Glibc
import Kit
import Store
import Support

/// Asks one question of DNS and returns the parsed answer. Two ways to ask: the system's stub
/// resolver (whatever /etc/resolv.conf says, which is how tailnet split DNS reaches a node) and a
/// named server (`gateway.discovery.nameserver`, for split DNS the system does not know about and
/// for tests). Both block in the kernel, so both run on a GCD thread, never on the Swift pool.
public protocol DNSQuerying: Sendable {
    /// "127.0.0.1:5354" or "system resolver", for messages.
    var label: String { get }
    func query(_ name: DNSName, _ type: DNSMessage.RecordType) async throws(DNSQueryError) -> DNSMessage
}

public struct DNSQueryError: Error, Sendable, CustomStringConvertible, Equatable {
    public enum Kind: Sendable, Equatable { case nxdomain, noData, timeout, failed }
    public let kind: Kind
    public let description: String
    init(_ kind: Kind, _ d: String) { self.kind = kind; description = d }
}

/// Runs a blocking resolver call as a job of the blocking executor and resumes the caller with its result.
func offThePool<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await BlockingExecutor.run("dns-query") { (_: CancelFlag) in body() }
}

/// glibc `res_nquery` with a private resolver state per call (thread-safe).
public struct SystemDNSResolver: DNSQuerying {
    public var label: String { "the system resolver" }
    public init() {}

    public func query(_ name: DNSName, _ type: DNSMessage.RecordType) async throws(DNSQueryError) -> DNSMessage {
        let text = name.text
        let result: Result<DNSMessage, DNSQueryError> = await offThePool {
            var answer = [UInt8](repeating: 0, count: 65_535)
            var herr: Int32 = 0
            let n = cresolv_query(text, Int32(type.rawValue), &answer, Int32(answer.count), &herr)
            guard n >= 0 else {
                switch herr {
                case HOST_NOT_FOUND: return .failure(DNSQueryError(.nxdomain, "\(text) does not exist"))
                case NO_DATA: return .failure(DNSQueryError(.noData, "\(text) has no \(type) record"))
                case TRY_AGAIN: return .failure(DNSQueryError(.timeout, "no answer for \(text) from the system resolver (/etc/resolv.conf)"))
                default: return .failure(DNSQueryError(.failed, "the system resolver failed for \(text) (h_errno \(herr))"))
                }
            }
            do { return .success(try DNSMessage.parse(Array(answer.prefix(Int(n))))) }
            catch { return .failure(DNSQueryError(.failed, "bad answer for \(text): \(error)")) }
        }
        return try result.get()
    }
}

/// A small DNS client over UDP to one named server. Sends the query, waits up to `timeout` for a
/// reply with the same id and question (anything else arriving on the socket is ignored), and
/// resends once halfway through in case the first datagram was lost.
public struct UDPDNSClient: DNSQuerying {
    public let host: String
    public let port: Int
    public let timeout: Duration
    public var label: String { HostPort(host: host, port: port).description }

    /// "127.0.0.1", "127.0.0.1:5354", "[::1]:53", "::1".
    public init(server: String, timeout: Duration = .seconds(2)) throws(DNSQueryError) {
        guard let address = HostPort(server, defaultPort: 53) else {
            throw DNSQueryError(.failed, "gateway.discovery.nameserver \"\(server)\" is not host or host:port")
        }
        host = address.host; port = address.port; self.timeout = timeout
    }

    public func query(_ name: DNSName, _ type: DNSMessage.RecordType) async throws(DNSQueryError) -> DNSMessage {
        let (host, port, timeout, label) = (self.host, self.port, self.timeout, self.label)
        let result: Result<DNSMessage, DNSQueryError> = await offThePool {
            UDPDNSClient.exchange(host: host, port: port, timeout: timeout, label: label, name: name, type: type)
        }
        return try result.get()
    }

    private static func exchange(host: String, port: Int, timeout: Duration, label: String, name: DNSName,
                                 type: DNSMessage.RecordType) -> Result<DNSMessage, DNSQueryError> {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
        var res: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &res) == 0, let ai = res else {
            return .failure(DNSQueryError(.failed, "cannot resolve the nameserver \(host)"))
        }
        defer { freeaddrinfo(ai) }
        let fd = socket(ai.pointee.ai_family, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return .failure(DNSQueryError(.failed, "socket: \(String(cString: strerror(errno)))")) }
        defer { close(fd) }
        // connect(): the kernel then drops datagrams from anyone but the server.
        guard connect(fd, ai.pointee.ai_addr, ai.pointee.ai_addrlen) == 0 else {
            return .failure(DNSQueryError(.failed, "cannot reach \(label): \(String(cString: strerror(errno)))"))
        }
        let id = UInt16.random(in: 0...UInt16.max)
        let packet = DNSMessage.query(id: id, name: name, type: type)
        let start = ContinuousClock.now
        let deadline = start + timeout
        var resent = false
        var lastProblem: String?
        guard send(fd, packet, packet.count, 0) == packet.count else {
            return .failure(DNSQueryError(.failed, "cannot send to \(label): \(String(cString: strerror(errno)))"))
        }
        var buf = [UInt8](repeating: 0, count: 65_535)
        while true {
            let now = ContinuousClock.now
            if now >= deadline { break }
            if !resent && now - start >= timeout / 2 {
                resent = true
                _ = send(fd, packet, packet.count, 0)
            }
            let waitUntil = resent ? deadline : min(deadline, start + timeout / 2)
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ms = max(1, Int32((waitUntil - now).milliseconds))
            let r = poll(&pfd, 1, ms)
            if r < 0 && errno == EINTR { continue }
            if r <= 0 { continue }
            let n = recv(fd, &buf, buf.count, 0)
            if n < 0 {
                // ECONNREFUSED: nothing listens there (ICMP port unreachable).
                if errno == EINTR { continue }
                return .failure(DNSQueryError(.failed, "no DNS server at \(label): \(String(cString: strerror(errno)))"))
            }
            guard let m = try? DNSMessage.parse(Array(buf.prefix(n))) else { lastProblem = "an unparseable reply"; continue }
            guard m.isResponse, m.id == id, let q = m.questions.first, q.name.sameName(as: name), q.type == type.rawValue else {
                lastProblem = "a reply to another question"; continue
            }
            switch m.rcode {
            case 0:
                if !m.answers.contains(where: { $0.type == type.rawValue }) {
                    return .failure(DNSQueryError(.noData, "\(name.text) has no \(type) record at \(label)"))
                }
                return .success(m)
            case 3: return .failure(DNSQueryError(.nxdomain, "\(name.text) does not exist at \(label)"))
            default:
                let what = [1: "format error", 2: "server failure", 4: "not implemented", 5: "refused"][m.rcode] ?? "error code \(m.rcode)"
                return .failure(DNSQueryError(.failed, "\(label) answered \(name.text) with \(what)"))
            }
        }
        return .failure(DNSQueryError(.timeout, "no answer from \(label) for \(name.text) within \(timeout.milliseconds) ms"
                                      + (lastProblem.map { " (got \($0))" } ?? "")))
    }
}
