import Glibc
import Support

/// A walk of a directory tree through descriptors (never following a link), for dir.fetch: the
/// relative names in upstream's order, the disk usage `du -sk` would report (and the apparent size,
/// which bounds sparse files the same way), and whether a file of
/// the node's own state is in it under another name (a hard link).
struct TreeWalk {
    enum Stop: Error, Sendable { case tooManyEntries, tooLarge, privateFile(String), failed(Int32), cancelled }

    var entries: [String] = []
    var kilobytes = 0
    /// What tar will read: the files' sizes, holes included (a sparse file has few blocks and many
    /// bytes, all of which tar reads as zeros and gzip squeezes, burning CPU until the timeout).
    var apparentKilobytes = 0

    /// Walks the directory open at `fd`. `maxEntries`: stop past this many names (nil: keep no
    /// names); `maxKilobytes`: stop past this much disk usage; `privateInodes` is asked once, and only
    /// when a file with more than one name turns up.
    static func walk(_ fd: Int32, maxEntries: Int?, maxKilobytes: Int?, privateInodes: () -> Set<FileID>,
                     cancel: CancelFlag) -> Result<TreeWalk, Stop> {
        var w = TreeWalk()
        var inodes: Set<FileID>?
        func visit(_ dirFD: Int32, _ prefix: String) -> Stop? {
            if cancel.isCancelled { return .cancelled }
            var st = stat()
            if fstat(dirFD, &st) == 0 { w.kilobytes += Int(st.st_blocks) / 2 }
            let list: [DirectoryEntry]
            switch DirectoryEntries.list(dirFD, withStat: true) {
            case .success(let l): list = maxEntries == nil ? l : SortedNames.sort(l) { $0.name }  // the order matters only for preflight's names
            case .failure(let e): return .failed(e.code)
            }
            for e in list {
                let rel = prefix.isEmpty ? e.name : prefix + "/" + e.name
                if let maxEntries {
                    w.entries.append(rel)
                    if w.entries.count > maxEntries { return .tooManyEntries }
                }
                guard let info = e.info else { continue }
                if (info.st_mode & S_IFMT) == S_IFDIR {
                    let child = openat(dirFD, e.name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                    guard child >= 0 else { return .failed(errno) }
                    defer { close(child) }
                    if let stop = visit(child, rel) { return stop }
                    continue
                }
                w.kilobytes += Int(info.st_blocks) / 2
                if (info.st_mode & S_IFMT) == S_IFREG { w.apparentKilobytes += Int(info.st_size / 1024) }
                if let maxKilobytes, w.kilobytes > maxKilobytes || w.apparentKilobytes > maxKilobytes { return .tooLarge }
                if (info.st_mode & S_IFMT) == S_IFREG, info.st_nlink > 1 {
                    if inodes == nil { inodes = privateInodes() }
                    if inodes!.contains(FileID(info)) { return .privateFile(rel) }
                }
            }
            return nil
        }
        if let stop = visit(fd, "") { return .failure(stop) }
        return .success(w)
    }
}
