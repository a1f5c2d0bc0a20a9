import Config
import Glibc
import Kit
import Support

/// Reads procfs/sysfs/etc files below a root directory, so tests can point the readers at a
/// fixture tree instead of the real machine. Every read is optional: a missing or unreadable file
/// is `nil`, never an error, because which files exist varies wildly between hardware, kernels
/// and containers.
struct SysRoot: Sendable {
    /// The root without a trailing slash; "" stands for the real "/".
    let prefix: String

    init(_ root: String) {
        var r = root
        while r.hasSuffix("/") { r.removeLast() }
        prefix = r
    }

    /// True when reading the live machine, where syscalls (gethostname, uname, clock) are valid
    /// fallbacks; for a fixture tree they would leak the test machine into the result.
    var isHost: Bool { prefix.isEmpty }

    func path(_ absolute: String) -> String { prefix + absolute }

    /// Whole file contents. procfs/sysfs report bogus sizes (0 or 4096), so this reads to EOF
    /// rather than trusting stat. Large files (routing tables of a full-table router) are cut at
    /// `limit` instead of being slurped whole.
    func read(_ absolute: String, limit: Int = 8 << 20) -> String? {
        let fd = open(path(absolute), O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while bytes.count < limit {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                // Some sysfs attributes fail on read (carrier of a downed link, a sleeping
                // sensor's temp): that is "no value", not a partial one.
                return nil
            }
            if n == 0 { break }
            bytes.append(contentsOf: chunk[0..<n])
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The file as one trimmed value (sysfs attributes end in "\n"; device-tree strings in NUL);
    /// nil when absent or blank.
    func value(_ absolute: String) -> String? {
        guard let raw = read(absolute, limit: 65536) else { return nil }
        let trimmed = raw.trimmed()
        return trimmed.isEmpty ? nil : trimmed
    }

    func int(_ absolute: String) -> Int? { value(absolute).flatMap { Int($0) } }

    func exists(_ absolute: String) -> Bool { FileSystem.exists(path(absolute)) }

    /// Directory entries, sorted so output does not depend on readdir order.
    func children(_ absolute: String) -> [String] {
        ((try? FileSystem.contentsOfDirectory(path(absolute))) ?? []).sorted()
    }
}
