import CAvahi
import Config
import Glibc
import Kit
import Store
import Support

/// LAN discovery: browses `_openclaw-gw._tcp` in `local.` through avahi-daemon (over D-Bus; the
/// client honours DBUS_SYSTEM_BUS_ADDRESS) and resolves each instance it announces.
///
/// Avahi's client is single-threaded: every avahi call below happens on one dedicated thread that
/// runs `avahi_simple_poll_iterate`, so nothing blocks the Swift cooperative pool and no lock is
/// needed around avahi objects. Results land in `table` (locked) and `onChange` is called.
///
/// No daemon or no bus is a normal situation on Linux, not an error to retry in a loop: the
/// client is created with AVAHI_CLIENT_NO_FAIL, so with the bus up but avahi-daemon absent it
/// waits (sleeping in poll) for the daemon to appear; with no bus at all it fails once and the
/// status says why and what to do.
public final class AvahiBrowser: @unchecked Sendable {  // the avahi C objects below belong to the poll thread alone
    public enum Status: Sendable, Equatable {
        case starting
        case browsing
        /// The system bus is there but avahi-daemon is not (yet); we wait for it.
        case daemonNotRunning
        /// Gave up (no system bus, browse refused); the text says why and what to do.
        case unavailable(String)
        case stopped
    }

    public let table = LANServiceTable()
    private let onChange: @Sendable () -> Void
    private let log = Logger(component: "discovery")
    private struct Life {
        var status: Status = .starting
        var stopRequested = false
        var started = false
        /// Set when the poll thread has ended (stop() waits for it before freeing the poll).
        var finished = false
    }
    private let life = Locked(Life())
    private let poll: OpaquePointer

    // Owned by the poll thread.
    private var client: OpaquePointer?
    /// Set (on the poll thread) when avahi-daemon or the bus went away: the loop makes a new client.
    private var reconnectPending = false
    private var browser: OpaquePointer?
    private var resolvers: [LANServiceTable.Key: OpaquePointer] = [:]

    private let avahi: AvahiLibrary

    /// Fails with what is missing: the Avahi client library, or a poll object (out of memory or
    /// file descriptors).
    public init(onChange: @escaping @Sendable () -> Void = {}) throws(DynamicLibrary.Failure) {
        avahi = try AvahiLibrary.shared.get()
        guard let p = avahi.simplePollNew() else {
            throw DynamicLibrary.Failure(description: "avahi_simple_poll_new failed (out of memory or file descriptors)")
        }
        poll = p
        self.onChange = onChange
    }

    deinit { stop() }

    public var status: Status { life.withLock { $0.status } }

    private func setStatus(_ s: Status) {
        let changed: Bool = life.withLock { l in
            if case .stopped = l.status { return false }
            defer { l.status = s }
            return l.status != s
        }
        if changed { onChange() }
    }

    public func start() {
        life.withLock { $0.started = true }
        BlockingExecutor.startLoop(name: "avahi") { [self] in loop(); life.update { $0.finished = true } }
    }

    /// Stops browsing and frees everything (waits for the poll thread). Safe to call twice.
    public func stop() {
        let wasStarted: Bool? = life.withLock { l in
            if l.stopRequested { return nil }
            l.stopRequested = true
            return l.started
        }
        guard let wasStarted else { return }
        avahi.simplePollQuit(poll) // wakes the poll thread through avahi's wake-up pipe
        if wasStarted { life.wait(until: { $0.finished }) }
        avahi.simplePollFree(poll)
        life.withLock { $0.status = .stopped }
    }

    // MARK: poll thread

    private func loop() {
        if life.withLock({ $0.stopRequested }) { return }
        var error: Int32 = 0
        client = newClient(&error)
        guard client != nil else {
            setStatus(.unavailable(explain(error)))
            return
        }
        while true {
            // While reconnecting, wake up every 2 s to try again (the bus itself may be restarting).
            let r = avahi.simplePollIterate(poll, reconnectPending ? 2000 : -1)
            if r == 1 { break } // quit requested
            if r < 0 {
                setStatus(.unavailable("the avahi poll loop failed: \(String(cString: strerror(errno)))"))
                break
            }
            if reconnectPending { reconnect() }
        }
        freeBrowsing()
        if let c = client { avahi.clientFree(c) }
        client = nil
    }

    private func newClient(_ error: inout Int32) -> OpaquePointer? {
        let me = Unmanaged.passUnretained(self).toOpaque()
        // The callback runs for the first time inside avahi_client_new, before it returns.
        return avahi.clientNew(avahi.simplePollGet(poll), AVAHI_CLIENT_NO_FAIL, { c, state, me in
            guard let c, let me else { return }
            Unmanaged<AvahiBrowser>.fromOpaque(me).takeUnretainedValue().clientChanged(c, state)
        }, me, &error)
    }

    /// After avahi-daemon restarted (or the bus did): a fresh client, as avahi-browse does. With
    /// NO_FAIL it waits in CONNECTING until the daemon is back; nil means no bus yet (retried).
    private func reconnect() {
        freeBrowsing()
        if let c = client { avahi.clientFree(c) }
        var error: Int32 = 0
        client = newClient(&error)
        reconnectPending = client == nil
        if client == nil { setStatus(.unavailable(explain(error) + "; retrying")) }
    }

    private func clientChanged(_ c: OpaquePointer, _ state: AvahiClientState) {
        switch state {
        case AVAHI_CLIENT_S_RUNNING, AVAHI_CLIENT_S_REGISTERING, AVAHI_CLIENT_S_COLLISION:
            guard browser == nil else { return }
            let me = Unmanaged.passUnretained(self).toOpaque()
            browser = avahi.serviceBrowserNew(c, cavahi_if_unspec(), cavahi_proto_unspec(), DiscoveredGateway.serviceType,
                                                "local", AvahiLookupFlags(0), { _, iface, proto, event, name, type, domain, _, me in
                guard let me else { return }
                Unmanaged<AvahiBrowser>.fromOpaque(me).takeUnretainedValue()
                    .browsed(iface, proto, event, name.map { String(cString: $0) }, type.map { String(cString: $0) },
                             domain.map { String(cString: $0) })
            }, me)
            if browser == nil {
                setStatus(.unavailable("avahi refused to browse \(DiscoveredGateway.serviceType): \(avahi.describe(avahi.clientErrno(c)))"))
            } else {
                setStatus(.browsing)
            }
        case AVAHI_CLIENT_CONNECTING:
            // The daemon went away (or is not there yet): what we knew is stale.
            freeBrowsing()
            setStatus(.daemonNotRunning)
        case AVAHI_CLIENT_FAILURE:
            freeBrowsing()
            if avahi.clientErrno(c) == cavahi_err_disconnected() {
                // avahi-daemon restarted (upgrade, `systemctl restart`): reconnect, not give up.
                setStatus(.daemonNotRunning)
                reconnectPending = true
            } else {
                setStatus(.unavailable("lost the connection to avahi-daemon: \(avahi.describe(avahi.clientErrno(c)))"))
                avahi.simplePollQuit(poll)
            }
        default:
            break
        }
    }

    private func freeBrowsing() {
        for r in resolvers.values { _ = avahi.serviceResolverFree(r) }
        resolvers.removeAll()
        if let b = browser { _ = avahi.serviceBrowserFree(b) }
        browser = nil
        table.reset()
        onChange()
    }

    private func browsed(_ iface: AvahiIfIndex, _ proto: AvahiProtocol, _ event: AvahiBrowserEvent,
                         _ name: String?, _ type: String?, _ domain: String?) {
        switch event {
        case AVAHI_BROWSER_NEW:
            guard let name, let type, let domain, let c = client else { return }
            let key = LANServiceTable.Key(interface: iface, proto: proto, name: name, domain: domain)
            if let old = resolvers.removeValue(forKey: key) { _ = avahi.serviceResolverFree(old) }
            table.announced(key)
            let me = Unmanaged.passUnretained(self).toOpaque()
            // Kept open until the service goes away: avahi then reports TXT/address changes too.
            // The address is asked for in the protocol the service was seen on (an A record for
            // an IPv4 sighting): with "either", avahi may answer an IPv4 sighting with the host's
            // IPv6 address, and a gateway that listens on IPv4 only (the usual) is then refused
            // at an address its IPv4 row should have given (seen on a busy test machine).
            let r = avahi.serviceResolverNew(c, iface, proto, name, type, domain, proto, AvahiLookupFlags(0), {
                _, iface, proto, event, name, _, domain, host, address, port, txt, _, me in
                guard let me else { return }
                Unmanaged<AvahiBrowser>.fromOpaque(me).takeUnretainedValue()
                    .resolvedCallback(iface, proto, event, name.map { String(cString: $0) }, domain.map { String(cString: $0) },
                                      host.map { String(cString: $0) }, address, port, txt)
            }, me)
            if let r { resolvers[key] = r } else {
                table.failed(key, "avahi could not start resolving it: \(avahi.describe(avahi.clientErrno(c)))")
            }
            log.debug("LAN: \(name) appeared on \(AvahiBrowser.interfaceName(iface))/\(proto == cavahi_proto_inet6() ? "IPv6" : "IPv4")")
            onChange()
        case AVAHI_BROWSER_REMOVE:
            guard let name, let domain else { return }
            let key = LANServiceTable.Key(interface: iface, proto: proto, name: name, domain: domain)
            if let r = resolvers.removeValue(forKey: key) { _ = avahi.serviceResolverFree(r) }
            table.removed(key)
            log.debug("LAN: \(name) went away on \(AvahiBrowser.interfaceName(iface))")
            onChange()
        case AVAHI_BROWSER_ALL_FOR_NOW:
            table.setAllForNow()
            onChange()
        case AVAHI_BROWSER_FAILURE:
            let why = client.map { avahi.describe(avahi.clientErrno($0)) } ?? "unknown error"
            freeBrowsing()
            setStatus(.unavailable("browsing failed: \(why)"))
        default:
            break // CACHE_EXHAUSTED: nothing to do
        }
    }

    private func resolvedCallback(_ iface: AvahiIfIndex, _ proto: AvahiProtocol, _ event: AvahiResolverEvent, _ name: String?,
                                  _ domain: String?, _ host: String?, _ address: UnsafePointer<AvahiAddress>?, _ port: UInt16,
                                  _ txt: UnsafeMutablePointer<AvahiStringList>?) {
        guard let name, let domain else { return }
        let key = LANServiceTable.Key(interface: iface, proto: proto, name: name, domain: domain)
        guard event == AVAHI_RESOLVER_FOUND else {
            let why = client.map { avahi.describe(avahi.clientErrno($0)) } ?? "unknown error"
            log.debug("LAN: could not resolve \(name): \(why)")
            table.failed(key, "could not resolve: \(why)")
            if let r = resolvers.removeValue(forKey: key) { _ = avahi.serviceResolverFree(r) }
            onChange()
            return
        }
        var addr = avahi.addressText(address)
        let v6 = address?.pointee.proto == cavahi_proto_inet6()
        // A link-local IPv6 address is only usable together with its interface.
        if v6, addr.lowercased().hasPrefix("fe80:") { addr += "%" + AvahiBrowser.interfaceName(iface) }
        var strings: [[UInt8]] = []
        var p = txt
        while let item = p {
            let size = Int(item.pointee.size)
            let text = avahi.stringListGetText(item)
            strings.append(text.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
            p = avahi.stringListGetNext(item)
        }
        table.resolved(key, .init(host: host ?? "", address: addr, port: Int(port), txt: strings,
                                  interfaceName: AvahiBrowser.interfaceName(iface), ipv6: v6))
        log.debug("LAN: resolved \(name) → \(host ?? "?") \(addr):\(port)")
        onChange()
    }

    /// The interface's name in our network namespace (avahi-daemon's indexes are its own; on a
    /// normal system that is the same namespace).
    static func interfaceName(_ index: AvahiIfIndex) -> String {
        var buf = [CChar](repeating: 0, count: Int(IF_NAMESIZE) + 1)
        guard index > 0, if_indextoname(UInt32(index), &buf) != nil else { return "if\(index)" }
        return String(cBuffer: buf)
    }

    /// avahi_client_new failed: say what is missing and what to do about it.
    func explain(_ error: Int32) -> String {
        let why = avahi.describe(error)
        let bus = ProcessEnvironment.current["DBUS_SYSTEM_BUS_ADDRESS"] ?? "unix:path=/run/dbus/system_bus_socket"
        return "cannot talk to avahi-daemon (\(why)) on the D-Bus system bus at \(bus). LAN discovery needs the system bus and " +
            "avahi-daemon: `apt install avahi-daemon && systemctl enable --now avahi-daemon`. Meanwhile set gateway.url, " +
            "or gateway.discovery.wideAreaDomain for unicast DNS-SD"
    }
}
