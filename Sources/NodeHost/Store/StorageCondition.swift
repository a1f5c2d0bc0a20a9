import CSQLite
import Glibc

/// What the file system under the state directory says about a failed write: full, or mounted
/// read-only. SQLite reports a full disk as SQLITE_FULL or, when the WAL index cannot grow, as a
/// bare "disk I/O error"; the file system itself tells the two apart from a real I/O error.
enum StorageCondition {
    case full
    case readOnly

    static func of(directory: String) -> StorageCondition? {
        var st = statvfs()
        guard statvfs(directory, &st) == 0 else { return nil }
        if st.f_flag & UInt(ST_RDONLY) != 0 { return .readOnly }
        if st.f_bavail == 0 { return .full }
        return nil
    }

    /// A sentence for a failed SQLite call on a database in `directory`, or nil when the file
    /// system is fine (then SQLite's own message stands alone).
    static func hint(code: Int32, directory: String) -> String? {
        let primary = code & 0xff
        guard [SQLITE_FULL, SQLITE_IOERR, SQLITE_READONLY, SQLITE_CANTOPEN].contains(primary) else { return nil }
        switch of(directory: directory) {
        case .full: return "the file system holding \(directory) is full: free some space and try again (nothing was changed)"
        case .readOnly: return "\(directory) is on a read-only file system: remount it read-write or set node.stateDir (nothing was changed)"
        case nil: return primary == SQLITE_FULL ? "the disk is full: free some space and try again (nothing was changed)" : nil
        }
    }
}
