import Glibc

/// Who is at the other end of a Unix socket, as the kernel says (SO_PEERCRED): the process, its
/// account and group when it connected. What the control socket and `mcp serve`'s socket decide on.
public struct PeerCredentials: Sendable, Equatable {
    public let pid: pid_t
    public let uid: uid_t
    public let gid: gid_t

    /// nil when the kernel does not say (not a Unix socket).
    public static func of(_ fd: Int32) -> PeerCredentials? {
        // struct ucred { pid_t pid; uid_t uid; gid_t gid; } is hidden behind _GNU_SOURCE in Glibc's module.
        var cred: (Int32, UInt32, UInt32) = (0, 0, 0)
        var len = socklen_t(MemoryLayout<(Int32, UInt32, UInt32)>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 else { return nil }
        return PeerCredentials(pid: cred.0, uid: cred.1, gid: cred.2)
    }
}
