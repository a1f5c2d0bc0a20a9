import Foundation
@testable import Support

/// Size and figures of the chaos scenarios (issue #16). `scripts/test` runs each at scale 1 (a few
/// iterations); `scripts/chaos` sets OPENCLAW_CHAOS_SCALE (500) for the full campaign and
/// OPENCLAW_CHAOS_OUT to a directory where each scenario leaves its figures as JSON.
enum Chaos {
    static let scale = max(1, Int(ProcessInfo.processInfo.environment["OPENCLAW_CHAOS_SCALE"] ?? "") ?? 1)
    static var full: Bool { scale >= 500 }

    /// `small` in the test suite, `fullSize` in the campaign, in between for other scales.
    static func size(_ small: Int, full fullSize: Int) -> Int {
        full ? fullSize : min(fullSize, small * scale)
    }

    /// SQLite's own `PRAGMA integrity_check` of a database file, from another process ("ok" when intact).
    static func integrityCheck(_ db: String) throws -> String {
        let r = try runProcess("/usr/bin/python3", ["-c", "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('PRAGMA integrity_check').fetchone()[0])", db])
        return (r.stdout + r.stderr).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Writes `<OPENCLAW_CHAOS_OUT>/<scenario>.json` for scripts/chaos's table.
    static func report(_ scenario: String, _ figures: [String: JSONValue]) {
        guard let dir = ProcessInfo.processInfo.environment["OPENCLAW_CHAOS_OUT"] else { return }
        try? JSONValue.object(figures).jsonString().write(toFile: dir + "/\(scenario).json", atomically: true, encoding: .utf8)
    }
}

/// A process's resources from /proc, to show they come back to baseline.
struct ProcStats {
    let fds: Int
    let threads: Int
    let rssKiB: Int
    /// user + system CPU time in clock ticks.
    let cpuTicks: Int

    /// The process's figures once its descriptors and threads are back within `fds`/`threads` of
    /// `baseline` (what ended — sessions, clients — lets go of them a little after, on a busy
    /// machine later still), or as they are after `timeout` seconds.
    static func settled(pid: Int32, near baseline: ProcStats, fds: Int, threads: Int, timeout: TimeInterval = 20) -> ProcStats? {
        var last = ProcStats(pid: pid)
        _ = waitUntil(timeout: timeout) {
            last = ProcStats(pid: pid)
            guard let s = last else { return true }
            return s.fds <= baseline.fds + fds && s.threads <= baseline.threads + threads
        }
        return last
    }

    init?(pid: Int32) {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let fdList = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd") else { return nil }
        func field(_ name: String) -> Int {
            let line = status.split(separator: "\n").first { $0.hasPrefix(name + ":") } ?? ""
            return Int(line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first ?? "") ?? -1
        }
        fds = fdList.count
        threads = field("Threads")
        rssKiB = field("VmRSS")
        // Fields after the command name (which may hold spaces) start at ") ".
        let rest = stat[stat.range(of: ") ")!.upperBound...].split(separator: " ")
        cpuTicks = (Int(rest[11]) ?? 0) + (Int(rest[12]) ?? 0)  // utime, stime (fields 14 and 15)
    }

    static var ticksPerSecond: Double { Double(sysconf(Int32(_SC_CLK_TCK))) }
}
