import Glibc
import Support

/// The `node.host.stats` payload (docs/PROTOCOL.md "Host stats"): a closed object, so exactly
/// these keys, absent optionals left out, every value inside the gateway's bounds.
package struct HostStats: Encodable, Sendable, Equatable {
    let cpuCount: Int
    /// 1, 5 and 15 minute load; left out when all three are 0 (nothing measured).
    let loadAverage: [Double]?
    let memoryTotalBytes: Int64
    let memoryFreeBytes: Int64
    /// The filesystem of the state directory; both or neither.
    let diskTotalBytes: Int64?
    let diskAvailableBytes: Int64?

    /// The largest integer a JSON number carries exactly (what the gateway's numbers are).
    static let maxBytes: Int64 = 9_007_199_254_740_991

    /// Samples this host: online CPUs, load average, /proc/meminfo (MemAvailable as free, MemFree
    /// on kernels without it), and statvfs of the state directory (space unprivileged users get).
    package static func sample(stateDirectory: String, meminfo: String? = FileSystem.readText("/proc/meminfo")) -> HostStats {
        let cpus = min(max(sysconf(Int32(_SC_NPROCESSORS_ONLN)), 1), 4096)
        var loads = [Double](repeating: 0, count: 3)
        let n = getloadavg(&loads, 3)
        let clampedLoads = loads.map { $0.isFinite ? min(max($0, 0), 100_000) : 0 }
        let (total, free) = memory(meminfo ?? "")
        let disk = StorageReader.read(path: stateDirectory)
        let diskTotal = clamp(disk.totalBytes), diskFree = min(clamp(disk.freeBytes), diskTotal)
        return HostStats(cpuCount: cpus, loadAverage: n == 3 && clampedLoads.contains { $0 > 0 } ? clampedLoads : nil,
                         memoryTotalBytes: total, memoryFreeBytes: min(free, total),
                         diskTotalBytes: diskTotal > 0 ? diskTotal : nil, diskAvailableBytes: diskTotal > 0 ? diskFree : nil)
    }

    /// MemTotal and MemAvailable (else MemFree) of /proc/meminfo, in bytes.
    static func memory(_ meminfo: String) -> (total: Int64, free: Int64) {
        var kib: [String: Int64] = [:]
        for line in meminfo.split(separator: "\n") {
            let parts = line.split(separator: " ", omittingEmptySubsequences: true)
            guard parts.count >= 2, parts[0].hasSuffix(":"), let v = Int64(parts[1]) else { continue }
            kib[String(parts[0].dropLast())] = v
        }
        let bytes = { (k: Int64?) -> Int64 in clamp(UInt64(max(0, min(k ?? 0, maxBytes / 1024))) * 1024) }
        return (bytes(kib["MemTotal"]), bytes(kib["MemAvailable"] ?? kib["MemFree"]))
    }

    private static func clamp(_ v: UInt64) -> Int64 { Int64(min(v, UInt64(maxBytes))) }
}
