import Config
import Glibc
import Kit
import Support

/// `device.status.storage`.
struct StorageStatus: Sendable, Equatable, Encodable {
    var totalBytes: UInt64
    var freeBytes: UInt64
    var usedBytes: UInt64
}

/// Space on the filesystem that holds the node's state directory, the disk this node actually
/// fills (iOS reports the app's home volume the same way). Not routed through `SysRoot`: a
/// fixture tree cannot fake a filesystem, so tests use a real path.
///
/// Same numbers as `df`: free = blocks available to unprivileged users (f_bavail), used =
/// blocks in use (f_blocks − f_bfree). Root-reserved blocks are in neither, so free + used may
/// be a few percent short of total.
enum StorageReader {
    static func read(path: String) -> StorageStatus {
        // The state dir may not exist yet on first start: measure the nearest existing ancestor,
        // which is the filesystem it will be created on.
        var candidate = path.isEmpty ? "/" : path
        while true {
            var st = statvfs()
            if statvfs(candidate, &st) == 0 {
                let unit = UInt64(st.f_frsize > 0 ? st.f_frsize : st.f_bsize)
                let total = UInt64(st.f_blocks) * unit
                let free = UInt64(st.f_bavail) * unit
                let used = (UInt64(st.f_blocks) - min(UInt64(st.f_bfree), UInt64(st.f_blocks))) * unit
                return StorageStatus(totalBytes: total, freeBytes: free, usedBytes: used)
            }
            guard candidate != "/" else { return StorageStatus(totalBytes: 0, freeBytes: 0, usedBytes: 0) }
            candidate = parent(of: candidate)
        }
    }

    private static func parent(of path: String) -> String {
        var p = Substring(path)
        while p.count > 1, p.hasSuffix("/") { p.removeLast() }
        guard let slash = p.lastIndex(of: "/") else { return "/" }
        let up = p[..<slash]
        return up.isEmpty ? "/" : String(up)
    }
}
