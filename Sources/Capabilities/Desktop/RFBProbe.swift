import Support

/// The first steps of RFB with the local server, as upstream's gateway-side probe takes them
/// (RFC 6143 §7.1): read its 12-byte version banner, answer with the version both speak, read the
/// security types it offers and classify them by the first one known, in the server's order. The
/// bytes read are kept: they are replayed to the gateway, which continues the handshake itself.
struct RFBProbe: Sendable, Equatable {
    /// How the gateway will authenticate to the server.
    enum Auth: Sendable, Equatable {
        /// Security type 2: the gateway answers the challenge with the password from the metadata frame.
        case vncPassword
        /// Security type 30 (Apple Remote Desktop): the operator supplies an account.
        case ardAccount
        /// Security type 1: no authentication (accepted only from the node's own wayvnc, whose
        /// password the node checks itself).
        case none
    }

    /// The server's banner as it came ("RFB 003.008\n").
    let banner: [UInt8]
    /// The node's version answer, which the gateway must repeat.
    let reply: [UInt8]
    /// The security offer as it came (v3.3: the u32 type; 3.7+: the count byte and the types).
    let securityBytes: [UInt8]
    /// The types offered, in the server's order.
    let offered: [UInt8]
    let auth: Auth

    /// How long a running server has to greet and offer its security types (upstream's probe).
    static let timeout: Duration = .milliseconds(1500)
    /// The same for a server the node has just started: its socket exists before its event loop
    /// runs, and on a loaded 2-core machine or a Raspberry Pi wayvnc's first greeting took longer
    /// than 1.5 s (CI saw a second stream fail that way while a client window was up).
    static let freshServerTimeout: Duration = .seconds(10)
    static let otherKnownTypes: Set<UInt8> = [6, 16, 19, 22, 113]

    /// The version the node answers a banner with: 3.8 above 3.7, 3.7 for 3.7, else 3.3; nil when
    /// the banner is not RFB's.
    static func reply(toBanner b: [UInt8]) -> [UInt8]? {
        guard b.count == 12, b[0..<4].elementsEqual("RFB ".utf8), b[7] == UInt8(ascii: "."), b[11] == UInt8(ascii: "\n"),
              let major = Int(String(decoding: b[4..<7], as: UTF8.self)), let minor = Int(String(decoding: b[8..<11], as: UTF8.self)),
              b[4..<7].allSatisfy({ (0x30...0x39).contains($0) }), b[8..<11].allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        let m = major > 3 ? 8 : major < 3 ? 3 : minor > 7 ? 8 : minor == 7 ? 7 : 3
        return Array("RFB 003.00\(m)\n".utf8)
    }

    /// The first type known, in server order; nil when it offers nothing the gateway can use.
    static func classify(_ offered: [UInt8]) throws(DesktopStreamError) -> Auth {
        for t in offered {
            switch t {
            case 1: return .none
            case 2: return .vncPassword
            case 30: return .ardAccount
            case let t where otherKnownTypes.contains(t): throw .unsupportedSecurity(offered)
            default: continue
            }
        }
        throw .unsupportedSecurity(offered)
    }

    /// Probes the server on `socket`. Refuses one that offers no authentication unless
    /// `acceptNone` (the node's own wayvnc).
    static func run(_ socket: RFBSocket, acceptNone: Bool, within limit: Duration = timeout, cancel: CancelFlag) throws(DesktopStreamError) -> RFBProbe {
        let deadline = ContinuousClock.now + limit
        let banner: [UInt8]
        do throws(DesktopStreamError) { banner = try socket.read(exactly: 12, until: deadline, cancel: cancel) } catch {
            // Silence or a hang-up instead of a banner: something else listens there.
            if case .serverUnavailable = error { throw .notRFB }
            throw error
        }
        guard let reply = reply(toBanner: banner) else { throw .notRFB }
        try socket.write(reply, until: deadline)
        var security: [UInt8]
        var offered: [UInt8]
        if reply == Array("RFB 003.003\n".utf8) {
            security = try socket.read(exactly: 4, until: deadline, cancel: cancel)
            let type = UInt32(security[0]) << 24 | UInt32(security[1]) << 16 | UInt32(security[2]) << 8 | UInt32(security[3])
            if type == 0 { throw .serverRefused(try reason(socket, deadline, cancel)) }
            offered = type <= 255 ? [UInt8(type)] : []
        } else {
            security = try socket.read(exactly: 1, until: deadline, cancel: cancel)
            if security[0] == 0 { throw .serverRefused(try reason(socket, deadline, cancel)) }
            offered = try socket.read(exactly: Int(security[0]), until: deadline, cancel: cancel)
            security += offered
        }
        let auth = try classify(offered)
        if auth == .none && !acceptNone { throw .unauthenticated }
        return RFBProbe(banner: banner, reply: reply, securityBytes: security, offered: offered, auth: auth)
    }

    /// A refusal's reason string (u32 length + text), at most 1 KiB of it.
    private static func reason(_ socket: RFBSocket, _ deadline: ContinuousClock.Instant, _ cancel: CancelFlag) throws(DesktopStreamError) -> String {
        let len = try socket.read(exactly: 4, until: deadline, cancel: cancel)
        let n = Int(UInt32(len[0]) << 24 | UInt32(len[1]) << 16 | UInt32(len[2]) << 8 | UInt32(len[3]))
        return String(decoding: try socket.read(exactly: min(n, 1024), until: deadline, cancel: cancel), as: UTF8.self)
    }
}
