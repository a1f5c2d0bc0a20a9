import Glibc

/// Who listens on a loopback TCP port, as the kernel says (/proc/net/tcp and tcp6: each socket's
/// owner uid). Before a secret goes to an `http://127.0.0.1:…` server, the node checks that the
/// listener is its own account's or root's: another local account can bind a free loopback port
/// first (or after the real server stops) and read whatever is sent to it.
public enum LoopbackListener {
    /// The owners of the listening sockets on `port` (loopback or wildcard addresses, IPv4 and IPv6).
    public static func owners(port: Int, procNet: String = "/proc/net") -> [uid_t] {
        var out: [uid_t] = []
        for file in ["tcp", "tcp6"] {
            guard let text = FileSystem.readText(procNet + "/" + file) else { continue }
            for line in text.split(separator: "\n").dropFirst() {
                let f = line.split(separator: " ", omittingEmptySubsequences: true)
                // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid …
                guard f.count > 7, f[3] == "0A", let colon = f[1].lastIndex(of: ":"),
                      Int(f[1][f[1].index(after: colon)...], radix: 16) == port, let uid = uid_t(f[7]) else { continue }
                let address = String(f[1][..<colon])
                guard isLoopbackOrWildcard(hex: address) else { continue }
                out.append(uid)
            }
        }
        return out
    }

    /// /proc's hex address (network byte order in host-order words): 127.0.0.0/8, 0.0.0.0, ::1, ::,
    /// and IPv4-mapped loopback or wildcard.
    static func isLoopbackOrWildcard(hex: String) -> Bool {
        let h = hex.uppercased()
        if h.count == 8 { return h == "00000000" || h.hasSuffix("7F") }  // little-endian: 127.x.x.x ends in 7F
        guard h.count == 32 else { return false }
        if h == String(repeating: "0", count: 32) || h == "00000000000000000000000001000000" { return true }  // ::, ::1
        // ::ffff:a.b.c.d is 0000…FFFF0000 then the IPv4 word.
        if h.hasPrefix("0000000000000000FFFF0000") { let v4 = String(h.suffix(8)); return v4 == "00000000" || v4.hasSuffix("7F") }
        return false
    }

    /// Why a secret must not go to the listener on `port` (nil: every listener there is this
    /// account's or root's). No listener at all is fine: the connection will simply fail.
    public static func refusal(port: Int, host: String) -> String? {
        let me = geteuid()
        guard let other = owners(port: port).first(where: { $0 != me && $0 != 0 }) else { return nil }
        let name = AccountName.of(other)
        return "the listener on \(host):\(port) belongs to another account (\(name)), not this node's or root: not talking to it (it would get this server's headers, which may hold a secret, and answer in its place); stop that listener or use https"
    }
}
