import Glibc

/// Where a small server of the node listens when it must stay on this machine (`mcp serve
/// --http`, the metrics endpoint): a loopback port (`127.0.0.1:8765`, `[::1]:8765`,
/// `localhost:8765`) or a Unix socket (`unix:/path`, made 0600). Any other address is refused
/// with why: these servers speak plain HTTP, so a LAN address would hand what they serve to the
/// network; one that serves TLS (mcp serve with a certificate) may be given one (`network`).
public enum LocalServerAddress: Sendable, Equatable, CustomStringConvertible {
    /// Whether a server may listen beyond loopback, and if not, why (the refusal's text).
    public enum NetworkAddresses: Sendable {
        case allowed
        case refused(String)
    }


    case tcp(host: String, port: Int)
    case unix(String)

    /// `server` names the program in the refusal ("mcp serve", "the metrics endpoint").
    /// `network`: what to tell about another address instead of refusing it; nil refuses it, else
    /// an IP address of this machine (or 0.0.0.0, ::) is taken, for a server that then speaks TLS.
    public static func parse(_ text: String, server: String, network: NetworkAddresses? = nil) -> Result<LocalServerAddress, ListenFailure> {
        if text.hasPrefix("unix:") {
            let path = String(text.dropFirst(5))
            guard path.hasPrefix("/") else { return .failure(ListenFailure("unix: needs an absolute path, such as unix:/run/user/1000/openclaw-node.sock")) }
            return .success(.unix(path))
        }
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (1...65535).contains(port) else {
            return .failure(ListenFailure("\(text): give HOST:PORT (127.0.0.1:8765) or unix:PATH"))
        }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host == "localhost" { host = "127.0.0.1" }
        guard host == "::1" || host.hasPrefix("127.") else {
            switch network {
            case nil:
                return .failure(ListenFailure("\(host) is not a loopback address: \(server) listens on this machine only (it serves no TLS); reach it from elsewhere through an SSH tunnel"))
            case .refused(let why):
                return .failure(ListenFailure("\(host) is not a loopback address: \(why)"))
            case .allowed:
                guard ResolvedAddress.isIPLiteral(host) else {
                    return .failure(ListenFailure("\(host): give an IP address of this machine (or 0.0.0.0 for all of them), not a name"))
                }
                return .success(.tcp(host: host, port: port))
            }
        }
        return .success(.tcp(host: host, port: port))
    }

    public var description: String {
        switch self {
        case .tcp(let h, let p): return h.contains(":") ? "[\(h)]:\(p)" : "\(h):\(p)"
        case .unix(let p): return "unix:\(p)"
        }
    }

    /// A listening socket at this address (ListeningSocket).
    public func listen() -> Result<Int32, ListenFailure> {
        switch self {
        case .tcp(let host, let port): return ListeningSocket.tcp(host: host, port: port)
        case .unix(let path): return ListeningSocket.unix(path)
        }
    }
}
