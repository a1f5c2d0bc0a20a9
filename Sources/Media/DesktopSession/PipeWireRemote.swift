import Glibc
import Support

/// Where the node reaches PipeWire: the session's daemon by its socket ($PIPEWIRE_REMOTE when it
/// is a path, else pipewire-0 in the session's XDG_RUNTIME_DIR), or an fd a portal handed over.
/// The socket is connected here rather than by libpipewire, so the session's runtime directory
/// is the one the node was configured with, not whatever this process's environment says.
public enum PipeWireRemote: Sendable, Equatable {
    case socket(String)
    case fd(Int32)

    /// The session's daemon, or nil when neither variable names one.
    public static func session(environment env: [String: String]) -> PipeWireRemote? {
        if let remote = env["PIPEWIRE_REMOTE"], remote.hasPrefix("/") { return .socket(remote) }
        guard let run = env["XDG_RUNTIME_DIR"], !run.isEmpty else { return nil }
        return .socket(run + "/" + (env["PIPEWIRE_REMOTE"].flatMap { $0.isEmpty ? nil : $0 } ?? "pipewire-0"))
    }

    /// A connected fd for pw_context_connect_fd (which takes it over).
    func connect() throws(PipeWireStream.Failure) -> Int32 {
        switch self {
        case .fd(let fd): return fd
        case .socket(let path):
            // PipeWire takes the fd over; the socket object keeps (and closes) its own.
            let fd: Int32
            do throws(TransportError) {
                let sock = try TCPSocket.connect(unixPath: path)
                fd = fcntl(sock.fd, F_DUPFD_CLOEXEC, 3)
            } catch {
                throw PipeWireStream.Failure("cannot reach PipeWire at \(path) (\(error)): is the pipewire service running in this session?")
            }
            guard fd >= 0 else { throw PipeWireStream.Failure("cannot keep the PipeWire connection: \(String(cString: strerror(errno)))") }
            return fd
        }
    }
}
