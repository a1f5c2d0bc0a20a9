import Glibc
import Support

/// The desktop portal's request pattern (org.freedesktop.portal.Request): a portal method returns
/// at once with a request's object path, and its answer comes later as that request's Response
/// signal — after a dialog, when the portal shows one. The path is made from this connection's
/// unique name and a token of ours, so it is known before the call and the signal is watched
/// first: it cannot be missed.
public enum DesktopPortal {
    public static let service = "org.freedesktop.portal.Desktop"
    public static let objectPath = "/org/freedesktop/portal/desktop"

    /// Error names for a request's end other than success (Response codes 1 and 2, and no answer).
    public static let declined = "portal.declined"
    public static let failed = "portal.failed"
    public static let unanswered = "portal.unanswered"

    private static let tokens = Locked(UInt64(0))

    /// A token unique in this process, for handle_token and session_handle_token.
    static func token() -> String {
        let n = tokens.withLock { (v: inout UInt64) -> UInt64 in v += 1; return v }
        return "openclaw_\(getpid())_\(n)"
    }

    /// Calls `method` of `interface` with `arguments` and then `options` (an a{sv} with our
    /// handle_token added), and returns the results of its Response. `timeout` bounds the wait for
    /// the answer: when it passes, the request is closed (its dialog goes away) and the failure is
    /// `unanswered`.
    public static func request(_ bus: SessionBus, interface: String, method: String, arguments: [DBusValue] = [],
                               options: [(String, DBusValue)], timeout: Duration) throws(SessionBus.Failure) -> DBusValue {
        guard let sender = bus.uniqueName else {
            throw SessionBus.Failure(name: "connection", message: "this connection has no name on the session bus")
        }
        let token = token()
        // ":1.42" → "1_42", as the portal names its request objects.
        let senderPart = String(sender.dropFirst().map { $0 == "." ? "_" : $0 })
        let path = "\(objectPath)/request/\(senderPart)/\(token)"
        let answered = try bus.subscribe(path: path, interface: "org.freedesktop.portal.Request", member: "Response")
        // Every portal with ScreenCast names the request after handle_token: its Response comes on `path`.
        try bus.call(service, objectPath, interface, method, arguments + [.options(options + [("handle_token", .string(token))])])
        let response: [DBusValue]
        do throws(SessionBus.Failure) {
            response = try bus.next(answered, timeout: timeout)
        } catch {
            _ = try? bus.call(service, path, "org.freedesktop.portal.Request", "Close", timeout: .seconds(2))
            if error.name == "timeout" {
                throw SessionBus.Failure(name: unanswered, message: "\(interface).\(method): nobody answered within \(timeout)")
            }
            throw error
        }
        switch response.first?.int {
        case 0: return response.count > 1 ? response[1] : .array("{sv}", [])
        case 1: throw SessionBus.Failure(name: declined, message: "\(interface).\(method): the request was declined at the desktop")
        default: throw SessionBus.Failure(name: failed, message: "\(interface).\(method): the portal could not do it (response \(response.first?.int ?? -1))")
        }
    }

    /// Whether the portal on `bus` offers `interface` (it exports only what one of its backends
    /// implements), by asking for the interface's version property.
    public static func version(of interface: String, on bus: SessionBus) -> Int? {
        let r = try? bus.call(service, objectPath, "org.freedesktop.DBus.Properties", "Get", [.string(interface), .string("version")], timeout: .seconds(3))
        return r?.first?.int
    }
}
