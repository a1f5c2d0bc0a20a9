import CSystemd
import FoundationEssentials
import Glibc
import Kit
import Support

/// The daemon's side of a systemd `Type=notify` service: `READY=1` once the node serves (control
/// socket up; the gateway connection may still be in progress), `STATUS=` lines that say what it is
/// doing, `WATCHDOG=1` from the runtime's own loop when the unit sets `WatchdogSec=`, and
/// `STOPPING=1` on the way out. Outside systemd (no `NOTIFY_SOCKET`) every call does nothing.
final class ServiceManager: Sendable {
    /// Whether a service manager is listening.
    let active: Bool
    /// Half of `WatchdogSec=` (nil when the unit has no watchdog).
    let watchdogPeriod: Duration?

    init() {
        active = ProcessInfo.processInfo.environment["NOTIFY_SOCKET"] != nil
        var usec: UInt64 = 0
        watchdogPeriod = sd_watchdog_enabled(0, &usec) > 0 && usec > 0 ? .microseconds(Int64(usec / 2)) : nil
    }

    func notify(_ state: String) {
        guard active else { return }
        _ = sd_notify(0, state)
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
