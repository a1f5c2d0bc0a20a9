import CSdBus
import Glibc
import Kit
import Support

/// A connection to the desktop session's D-Bus (sd-bus): method calls with typed arguments, fds
/// passed both ways, and signals collected for the caller to wait on. Not thread-safe, as sd-bus
/// itself: one owner (a grabber, an input session) uses it at a time.
public final class SessionBus {
    /// A bus that could not be reached, or a call the other side refused (`name` is the D-Bus error
    /// name, e.g. org.freedesktop.DBus.Error.AccessDenied).
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public let name: String
        public let message: String
        public var description: String { message.isEmpty ? name : "\(message) (\(name))" }
        public init(name: String, message: String) { self.name = name; self.message = message }
    }

    /// Signals that matched a subscription, oldest first, until the caller takes them.
    public final class Subscription {
        fileprivate var slot: OpaquePointer?
        fileprivate var received: [[DBusValue]] = []
        fileprivate init() {}
        deinit { sd_bus_slot_unref(slot) }
    }

    private let bus: OpaquePointer
    public let address: String

    /// The session bus at `address` (a DBUS_SESSION_BUS_ADDRESS value).
    public init(address: String) throws(Failure) {
        var b: OpaquePointer?
        guard sd_bus_new(&b) >= 0, let b else { throw Failure(name: "sd_bus_new", message: "cannot make a D-Bus connection") }
        sd_bus_set_bus_client(b, 1)
        sd_bus_negotiate_fds(b, 1)
        var r = address.withCString { sd_bus_set_address(b, $0) }
        if r >= 0 { r = sd_bus_start(b) }
        guard r >= 0 else {
            sd_bus_flush_close_unref(b)
            throw Failure(name: "connect", message: "cannot connect to the session bus at \(address): \(String(cString: strerror(-r)))")
        }
        bus = b
        self.address = address
    }

    deinit { sd_bus_flush_close_unref(bus) }

    /// The session bus this process was started in (DBUS_SESSION_BUS_ADDRESS, else the systemd
    /// user bus in XDG_RUNTIME_DIR), or nil when neither is set.
    public static func sessionAddress(environment: [String: String]) -> String? {
        if let a = environment["DBUS_SESSION_BUS_ADDRESS"], !a.isEmpty { return a }
        if let run = environment["XDG_RUNTIME_DIR"], !run.isEmpty, FileSystem.exists(run + "/bus") { return "unix:path=\(run)/bus" }
        return nil
    }

    /// Calls `member` and returns its reply's arguments.
    @discardableResult
    public func call(_ destination: String, _ path: String, _ interface: String, _ member: String,
                     _ arguments: [DBusValue] = [], timeout: Duration = .seconds(10)) throws(Failure) -> [DBusValue] {
        var m: OpaquePointer?
        var r = sd_bus_message_new_method_call(bus, &m, destination, path, interface, member)
        guard r >= 0, let m else { throw Failure(name: "message", message: "cannot make a call to \(interface).\(member): \(String(cString: strerror(-r)))") }
        defer { sd_bus_message_unref(m) }
        for a in arguments {
            r = DBusMessageCoding.append(m, a)
            guard r >= 0 else { throw Failure(name: "message", message: "cannot encode an argument of \(interface).\(member): \(String(cString: strerror(-r)))") }
        }
        var error = sd_bus_error()
        defer { sd_bus_error_free(&error) }
        var reply: OpaquePointer?
        let micros = UInt64(max(1, timeout.components.seconds * 1_000_000 + timeout.components.attoseconds / 1_000_000_000_000))
        r = sd_bus_call(bus, m, micros, &error, &reply)
        guard r >= 0, let reply else {
            let name = error.name.map { String(cString: $0) } ?? "errno"
            let message = error.message.map { String(cString: $0) } ?? String(cString: strerror(-r))
            throw Failure(name: name, message: "\(interface).\(member): \(message)")
        }
        defer { sd_bus_message_unref(reply) }
        guard let values = DBusMessageCoding.readAll(reply) else {
            throw Failure(name: "reply", message: "\(interface).\(member) answered with values this node cannot read")
        }
        return values
    }

    /// This connection's unique name on the bus (":1.42"), which the portals build request paths from.
    public var uniqueName: String? {
        var name: UnsafePointer<CChar>?
        guard sd_bus_get_unique_name(bus, &name) >= 0, let name else { return nil }
        return String(cString: name)
    }

    /// Whether some connection owns `name` now (the desktop's service is running).
    public func hasOwner(_ name: String) -> Bool {
        let r = try? call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameHasOwner", [.string(name)], timeout: .seconds(2))
        return r?.first?.bool ?? false
    }

    /// Starts collecting the signals `interface.member` sent on `path` (nil: any path). Subscribe
    /// before the call that makes the signal come, so it cannot be missed.
    public func subscribe(path: String?, interface: String, member: String) throws(Failure) -> Subscription {
        let sub = Subscription()
        let r = sd_bus_match_signal(bus, &sub.slot, nil, path, interface, member, { message, userdata, _ in
            guard let userdata else { return 0 }
            let s = Unmanaged<Subscription>.fromOpaque(userdata).takeUnretainedValue()
            s.received.append(DBusMessageCoding.readAll(message) ?? [])
            return 0
        }, Unmanaged.passUnretained(sub).toOpaque())
        guard r >= 0 else { throw Failure(name: "match", message: "cannot watch \(interface).\(member): \(String(cString: strerror(-r)))") }
        return sub
    }

    /// The first signal of `subscription` that arrives (or already arrived) within `timeout`.
    public func next(_ subscription: Subscription, timeout: Duration, cancel: CancelFlag? = nil) throws(Failure) -> [DBusValue] {
        let deadline = ContinuousClock.now + timeout
        while true {
            if !subscription.received.isEmpty { return subscription.received.removeFirst() }
            try pump(until: deadline, cancel: cancel)
            if subscription.received.isEmpty, ContinuousClock.now >= deadline {
                throw Failure(name: "timeout", message: "no answer from the desktop within \(timeout)")
            }
        }
    }

    /// Handles what arrived, then waits (at most until `deadline`, in short steps a cancel reaches)
    /// for more.
    private func pump(until deadline: ContinuousClock.Instant, cancel: CancelFlag?) throws(Failure) {
        var handled = false
        while true {
            let r = sd_bus_process(bus, nil)
            guard r >= 0 else { throw Failure(name: "connection", message: "the session bus connection failed: \(String(cString: strerror(-r)))") }
            if r == 0 { break }
            handled = true
        }
        // What arrived during an earlier call sits in sd-bus's queue, not on the socket: once it is
        // handled, the caller looks before anything waits on the socket.
        if handled { return }
        if let cancel, cancel.isCancelled { throw Failure(name: "cancelled", message: "cancelled") }
        let left = deadline - ContinuousClock.now
        guard left > .zero else { return }
        let step = min(left, .milliseconds(100))
        _ = sd_bus_wait(bus, UInt64(step.components.attoseconds / 1_000_000_000_000 + step.components.seconds * 1_000_000))
    }
}
