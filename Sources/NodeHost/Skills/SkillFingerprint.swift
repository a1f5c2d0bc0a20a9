import Glibc
import Support

/// What the skills directories look like to `lstat`: each directory, each entry in it and each
/// folder's SKILL.md, with inode, mode, size and change times. Two equal fingerprints mean nothing
/// the catalog reads has changed, so the publisher rescans only when this differs.
///
/// Why a stat check every few seconds and not inotify: the directories may not exist yet (a
/// configured one created later, `<stateDir>/skills` before the first skill), inotify watches only
/// what exists and is not recursive, so it would need a watch per skill folder re-armed as folders
/// come and go, plus a C shim; a pass over at most 64 folders is ~130 `fstatat` calls (0.3 ms in a
/// debug build, measured), and a skill edited on disk reaching the gateway within two seconds is
/// soon enough.
package struct SkillFingerprint: Sendable, Equatable {
    package static let checkInterval: Duration = .seconds(2)

    private struct Entry: Equatable, Sendable {
        let name: String
        let ino: UInt64, mode: UInt32, size: Int64
        let mtime: Int64, mtimeNs: Int, ctime: Int64, ctimeNs: Int
        init(_ name: String, _ st: stat) {
            self.name = name
            ino = UInt64(st.st_ino); mode = UInt32(st.st_mode); size = Int64(st.st_size)
            mtime = Int64(st.st_mtim.tv_sec); mtimeNs = Int(st.st_mtim.tv_nsec)
            ctime = Int64(st.st_ctim.tv_sec); ctimeNs = Int(st.st_ctim.tv_nsec)
        }
    }
    private var entries: [Entry] = []

    package static func take(_ sources: SkillSources) -> SkillFingerprint {
        var fp = SkillFingerprint()
        for root in sources.roots where root.hasPrefix("/") {
            let real = PathName.resolvingSymlinks(root)
            let fd = open(real, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard fd >= 0 else { fp.entries.append(Entry(root + " (missing)", stat())); continue }
            defer { close(fd) }
            var st = stat()
            if fstat(fd, &st) == 0 { fp.entries.append(Entry(real, st)) }
            for name in SkillCatalog.entries(fd).sorted() where !name.hasPrefix(".") {
                guard fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 else { continue }
                fp.entries.append(Entry(name, st))
                guard st.st_mode & S_IFMT == S_IFDIR else { continue }
                let file = name + "/" + SkillCatalog.fileName
                if fstatat(fd, file, &st, AT_SYMLINK_NOFOLLOW) == 0 { fp.entries.append(Entry(file, st)) }
            }
        }
        return fp
    }
}
