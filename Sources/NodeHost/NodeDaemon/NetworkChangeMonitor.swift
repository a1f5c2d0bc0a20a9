import Glibc
import Kit
import Store
import Support

/// Watches the kernel's routing netlink (links, addresses, routes) and calls back — debounced —
/// when the network changes, so the gateway connection can come back promptly after Wi-Fi roams
/// or a cable is plugged in instead of waiting out a 30 s backoff.
public final class NetworkChangeMonitor: Sendable {
    // From <linux/netlink.h> / <linux/rtnetlink.h>; not exported by Glibc's module.
    private static let netlinkRoute: Int32 = 0
    private static let groups: UInt32 = 0x1 /* LINK */ | 0x10 /* IPV4_IFADDR */ | 0x40 /* IPV4_ROUTE */
        | 0x100 /* IPV6_IFADDR */ | 0x400 /* IPV6_ROUTE */

    /// Owned: closed once, after `stop()` shut it down, when the monitor goes.
    private let descriptor: FileDescriptor
    private var fd: Int32 { descriptor.rawValue }
    private let onChange: @Sendable () -> Void
    private let debounce: Duration
    private let stopped = Locked(false)

    /// nil when netlink is not available (then the backoff alone paces reconnects).
    public init?(debounce: Duration = .milliseconds(800), onChange: @escaping @Sendable () -> Void) {
        let raw = socket(Int32(AF_NETLINK), Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), NetworkChangeMonitor.netlinkRoute)
        guard raw >= 0 else { return nil }
        let socket = FileDescriptor(owning: raw)
        let s = socket.rawValue
        // struct sockaddr_nl { sa_family_t nl_family; unsigned short nl_pad; __u32 nl_pid; __u32 nl_groups; }
        var addr = [UInt8](repeating: 0, count: 12)
        addr[0] = UInt8(AF_NETLINK & 0xff)
        withUnsafeBytes(of: NetworkChangeMonitor.groups.littleEndian) { addr.replaceSubrange(8..<12, with: $0) }
        let rc = addr.withUnsafeBytes { bind(s, $0.baseAddress!.assumingMemoryBound(to: sockaddr.self), 12) }
        guard rc == 0 else { return nil }
        descriptor = socket
        self.onChange = onChange
        self.debounce = debounce
        BlockingExecutor.startLoop(name: "netlink") { [weak self] in self?.loop() }
    }

    public func stop() {
        stopped.withLock { stopped in
            guard !stopped else { return }
            stopped = true
            shutdown(fd, Int32(SHUT_RDWR))
        }
    }

    deinit { stop() }

    private func loop() {
        var buf = [UInt8](repeating: 0, count: 16384)
        while !stopped.withLock({ $0 }) {
            let n = recv(fd, &buf, buf.count, 0)
            if n < 0 { if errno == EINTR { continue }; if errno == ENOBUFS { /* overrun: still a change */ } else { return } }
            if n == 0 { return }
            // Swallow the burst a single change produces, then report once.
            let until = ContinuousClock.now + debounce
            while ContinuousClock.now < until {
                if pollOnce(fd, events: Int16(POLLIN), timeout: until - .now) { _ = recv(fd, &buf, buf.count, 0) }
            }
            if stopped.withLock({ $0 }) { return }
            onChange()
        }
    }
}
