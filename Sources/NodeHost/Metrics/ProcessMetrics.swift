import Glibc
import Kit
import Support

/// The daemon's own process, under the names every Prometheus client library uses
/// (`process_resident_memory_bytes`, `process_open_fds`, …), read from /proc/self.
enum ProcessMetrics {
    static func families(proc: String = "/proc") -> [MetricFamily] {
        var out: [MetricFamily] = []
        let page = Double(sysconf(Int32(_SC_PAGESIZE)))
        if let statm = FileSystem.readText(proc + "/self/statm")?.split(separator: " "), statm.count > 1, let resident = Double(statm[1]) {
            out.append(MetricFamily("process_resident_memory_bytes", .gauge, "Resident memory size in bytes.", value: resident * page))
        }
        if let fds = try? FileSystem.contentsOfDirectory(proc + "/self/fd") {
            // The directory listing opened one descriptor of its own.
            out.append(MetricFamily("process_open_fds", .gauge, "Number of open file descriptors.", value: Double(max(0, fds.count - 1))))
        }
        var limit = rlimit()
        if getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 {
            out.append(MetricFamily("process_max_fds", .gauge, "Maximum number of open file descriptors.", value: Double(limit.rlim_cur)))
        }
        // /proc/self/stat: fields after the ")" that ends the command name; utime and stime are
        // the 14th and 15th of the line, starttime the 22nd, all in clock ticks.
        if let stat = FileSystem.readText(proc + "/self/stat"), let close = stat.lastIndex(of: ")") {
            let f = stat[stat.index(after: close)...].split(separator: " ")
            let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
            if f.count > 19, let user = Double(f[11]), let system = Double(f[12]), let start = Double(f[19]), ticks > 0 {
                out.append(MetricFamily("process_cpu_seconds_total", .counter, "Total user and system CPU time spent in seconds.",
                                        value: (user + system) / ticks))
                if let boot = bootTime(proc) {
                    out.append(MetricFamily("process_start_time_seconds", .gauge, "Start time of the process since unix epoch in seconds.",
                                            value: boot + start / ticks))
                }
            }
        }
        return out
    }

    /// When the machine booted, seconds since the epoch (/proc/stat's btime).
    private static func bootTime(_ proc: String) -> Double? {
        guard let text = FileSystem.readText(proc + "/stat") else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("btime ") { return Double(line.dropFirst(6)) }
        return nil
    }

}
