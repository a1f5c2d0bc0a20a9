import Glibc
import Kit
import Support

/// The daemon's side of a systemd `Type=notify` service: `READY=1` once the node serves (control
/// socket up; the gateway connection may still be in progress), `STATUS=` lines that say what it is
/// doing, `WATCHDOG=1` from the runtime's own loop when the unit sets `WatchdogSec=`, and
/// `STOPPING=1` on the way out. Outside systemd (no `NOTIFY_SOCKET`) every call does nothing.
/// The protocol is a datagram of `KEY=value` lines to `$NOTIFY_SOCKET` (sd_notify(3)), spoken here
/// directly, so the daemon does not link libsystemd for it.
final class ServiceManager: Sendable {
    /// The service manager's socket (a path, or `@name` in the abstract namespace); nil outside systemd.
    let socketPath: String?
    /// Whether a service manager is listening.
    var active: Bool { socketPath != nil }
    /// Half of `WatchdogSec=` (nil when the unit has no watchdog, or it is meant for another process).
    let watchdogPeriod: Duration?

    init(environment env: [String: String] = ProcessEnvironment.current) {
        socketPath = env["NOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
        // sd_watchdog_enabled(3): WATCHDOG_USEC, and WATCHDOG_PID (when set) naming this process.
        let forUs = env["WATCHDOG_PID"].map { Int32($0) == getpid() } ?? true
        if forUs, let usec = env["WATCHDOG_USEC"].flatMap(UInt64.init), usec > 0 {
            watchdogPeriod = .microseconds(Int64(usec / 2))
        } else {
            watchdogPeriod = nil
        }
    }

    func notify(_ state: String) {
        guard let socketPath else { return }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return }
        defer { Glibc.close(fd) }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        var path = Array(socketPath.utf8)
        if path.first == UInt8(ascii: "@") { path[0] = 0 }  // abstract namespace
        let capacity = MemoryLayout.size(ofValue: addr.sun_path)
        guard path.count < capacity else { return }
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in raw.copyBytes(from: path) }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + path.count + (path.first == 0 ? 0 : 1))
        let bytes = Array(state.utf8)
        _ = withUnsafePointer(to: &addr) { a in
            a.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                bytes.withUnsafeBytes { sendto(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL), sa, length) }
            }
        }
    }

    /// Keeps STATUS= current and, with a watchdog, says WATCHDOG=1 — each time only after `alive`
    /// came back, a round trip through the actors that serve invokes: a wedged runtime stops
    /// petting, and systemd restarts it.
    func supervise(status: @escaping @Sendable () async -> String, alive: @escaping @Sendable () async -> Void) -> Task<Void, Never>? {
        guard active else { return nil }
        let period = min(watchdogPeriod ?? .seconds(1), .seconds(1))
        let watchdog = watchdogPeriod != nil
        return Task {
            var last = ""
            while !Task.isCancelled {
                await alive()
                let now = await status()
                var lines: [String] = []
                if now != last { lines.append("STATUS=\(now)"); last = now }
                if watchdog { lines.append("WATCHDOG=1") }
                if !lines.isEmpty { notify(lines.joined(separator: "\n")) }
                try? await Task.sleep(for: period)
            }
        }
    }
}
