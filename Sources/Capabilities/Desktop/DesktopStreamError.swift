import Kit

/// Why a desktop stream could not start or ended badly. The texts are upstream's node's, so the
/// gateway's viewer shows what it would show for any other node; `detail` adds what to do here.
enum DesktopStreamError: Error, Sendable, Equatable {
    /// The local server cannot be reached or broke off (with what happened).
    case serverUnavailable(String)
    /// It is not an RFB server.
    case notRFB
    /// It offers no authentication: refused, anybody on the machine could drive it.
    case unauthenticated
    /// It offers only security types the gateway cannot pre-authenticate.
    case unsupportedSecurity([UInt8])
    /// The server refused the connection (RFB failure reason).
    case serverRefused(String)
    /// The gateway broke the handshake (another version, bad auth, text frames).
    case gateway(String)
    /// No gateway session to attach through.
    case noGateway(String)
    /// The configuration cannot work (what to change).
    case configuration(String)
    case cancelled

    var nodeError: NodeError {
        switch self {
        case .serverUnavailable(let why):
            return NodeError(.unavailable, verbatim: "desktop stream loopback RFB server is unavailable: \(why)")
        case .notRFB:
            return NodeError(.unavailable, verbatim: "desktop stream target is not an RFB server")
        case .unauthenticated:
            return NodeError(.unavailable, verbatim: "refusing unauthenticated loopback RFB server: give the VNC server a password (x11vnc -rfbauth/-passwdfile) and name it in capabilities.desktop.passwordFile, or use server: \"auto\"")
        case .unsupportedSecurity(let types):
            return NodeError(.unavailable, verbatim: "loopback RFB server security is unsupported (it offers security types \(types.map(String.init).joined(separator: ", ")); the gateway needs VNC password authentication, type 2)")
        case .serverRefused(let reason):
            return NodeError(.unavailable, verbatim: "desktop stream loopback RFB server is unavailable: it refused the connection: \(reason)")
        case .gateway(let what):
            return NodeError(.unavailable, verbatim: what)
        case .noGateway(let why):
            return NodeError(.unavailable, verbatim: "desktop stream gateway connection is unavailable: \(why)")
        case .configuration(let what):
            return NodeError(.unavailable, verbatim: what)
        case .cancelled:
            return NodeError(.cancelled, "the desktop stream was cancelled")
        }
    }
}
