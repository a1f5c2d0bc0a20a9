import Config
import Glibc
import Kit
import Support

/// Seconds since boot, counting time spent suspended (like iOS's systemUptime counts on-time,
/// the Linux boot clock is the figure `uptime` shows).
struct UptimeReader: Sendable {
    let sys: SysRoot

    func read() -> Double {
        // /proc/uptime: "<seconds since boot> <idle seconds summed over CPUs>".
        if let text = sys.value("/proc/uptime"),
           let first = text.split(separator: " ").first, let seconds = Double(first) {
            return seconds
        }
        guard sys.isHost else { return 0 }
        var ts = timespec()
        guard clock_gettime(CLOCK_BOOTTIME, &ts) == 0 else { return 0 }
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
