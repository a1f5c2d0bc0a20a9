import Config
import Glibc
import Kit
import Support

/// Talks to a running daemon's control socket. `nil` from `connect` means no daemon is up.
public final class ControlClient {
    private let socket: UnixSocket
    private var buffer: [UInt8] = []

    private init(socket: UnixSocket) { self.socket = socket }

    /// nil also when the socket's server is not the daemon this CLI may trust (said on stderr):
    /// the kernel names the process at the other end (SO_PEERCRED), and only a server of this
    /// account, of root, or — for root's CLI — of the account that owns the state directory is the
    /// node's. A state directory reached through another account's symbolic link once sent the
    /// operator's invoke (and its params) to that account's socket.
    public static func connect(stateDir: String) -> ControlClient? {
        if case .connected(let c) = open(stateDir: stateDir) { return c }
        return nil
    }

    public enum Opened {
        case connected(ControlClient)
        case noDaemon
        /// Served by an account that is not the node's (said on stderr).
        case refused
    }

    /// `connect`, telling "nobody listens" from "somebody else listens".
    public static func open(stateDir: String) -> Opened {
        guard let s = try? UnixSocket.connect(ControlPaths.socket(stateDir: stateDir)) else { return .noDaemon }
        guard let why = refusal(serverUID: s.peerUID(), stateDir: stateDir) else { return .connected(ControlClient(socket: s)) }
        s.close()
        StandardStreams.line("openclaw-node: \(why)", to: STDERR_FILENO)
        return .refused
    }

    static func refusal(serverUID: uid_t?, stateDir: String) -> String? {
        let me = geteuid()
        guard let uid = serverUID else { return "cannot tell who serves the control socket in \(stateDir); not using it" }
        if uid == me || uid == 0 { return nil }
        // Root's CLI for a service account's daemon (/var/lib/openclaw-node): the state directory
        // itself (not a link to one) belongs to that account, in a directory only root may change.
        var st = stat(), parent = stat()
        if me == 0, lstat(stateDir, &st) == 0, st.st_mode & S_IFMT == S_IFDIR, st.st_uid == uid,
           stat(PathName.directory(stateDir), &parent) == 0, parent.st_uid == 0, parent.st_mode & 0o022 == 0 { return nil }
        let name = AccountName.of(uid)
        return "the control socket in \(stateDir) is served by another account (\(name)), not this node's daemon; not talking to it (check where the state directory leads)"
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Waits until the daemon closes this connection — it re-executes itself or stops (its
    /// descriptors are close-on-exec), or drops a client idle for longer than its limit — at most
    /// until `deadline`; false when the time ran out first.
    public func waitUntilClosed(until deadline: ContinuousClock.Instant) -> Bool {
        socket.waitForClose(until: deadline)
    }

    /// Sends one request and reads its answer. `cancel`: raised while the daemon works (an MCP
    /// client cancelled the call), the connection is closed, which the daemon takes as the caller
    /// gone and cancels the command it runs for it.
    public func request(_ req: JSONValue, cancel: CancelFlag? = nil) throws(Failure) -> JSONValue {
        let sent = socket.writeAll(Array((req.jsonString() + "\n").utf8))
        if let cancel {
            let wakeup = Wakeup()
            cancel.wakes(wakeup)
            if wakeup.wait(for: socket.fd) == .woken {
                socket.close()
                throw Failure(description: "cancelled; the daemon was told by closing the connection")
            }
        }
        // Read even when the write failed: a daemon that is too busy answers NODE_BUSY at once and
        // closes before our request arrives, and that answer is what the user should see.
        guard let line = socket.readLine(limit: ControlWire.maxLineBytes, buffer: &buffer),
              let reply = JSONValue.parse(line) else {
            throw Failure(description: sent ? "no answer from the daemon on its control socket" : "the daemon closed the control socket")
        }
        return reply
    }
}
