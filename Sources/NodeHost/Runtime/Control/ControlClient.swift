import Config
import Glibc
import Kit
import Store
import Support

/// Talks to a running daemon's control socket. `nil` from `connect` means no daemon is up.
public final class ControlClient {
    private let socket: UnixSocket
    private var buffer: [UInt8] = []

    private init(socket: UnixSocket) { self.socket = socket }

    public static func connect(stateDir: String) -> ControlClient? {
        guard let s = try? UnixSocket.connect(ControlPaths.socket(stateDir: stateDir)) else { return nil }
        return ControlClient(socket: s)
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public func request(_ req: JSONValue) throws(Failure) -> JSONValue {
        let sent = socket.writeAll(Array((req.jsonString() + "\n").utf8))
        // Read even when the write failed: a daemon that is too busy answers NODE_BUSY at once and
        // closes before our request arrives, and that answer is what the user should see.
        guard let line = socket.readLine(limit: ControlProtocol.maxLineBytes, buffer: &buffer),
              let reply = JSONValue.parse(line) else {
            throw Failure(description: sent ? "no answer from the daemon on its control socket" : "the daemon closed the control socket")
        }
        return reply
    }
}
