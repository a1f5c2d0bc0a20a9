import Glibc
import Kit
import Support

/// Where terminal uploads are staged. Not a shared /tmp (upstream's choice): the user's runtime
/// directory when the session has one ($XDG_RUNTIME_DIR, a 0700 tmpfs of this user, emptied at
/// logout and reboot, never written to an SD card), else the bundle's state directory. Either way
/// `<root>/openclaw-terminal-upload-XXXXXX/<name>`, directories 0700, files 0600.
struct UploadRoot: Sendable {
    let path: String

    init(environment: [String: String], stateDirectory: String) {
        if let runtime = environment["XDG_RUNTIME_DIR"], Self.isPrivateDirectory(runtime) {
            path = PathName.join(runtime, "openclaw-node/uploads")
        } else {
            path = PathName.join(stateDirectory, "uploads")
        }
    }

    /// The root, made (0700) when missing, and refused unless it is a directory of ours that no one
    /// else may enter.
    func prepare() -> Result<String, Unusable> {
        if let why = PrivateDirectory.create(path) { return .failure(Unusable(reason: why)) }
        guard Self.isPrivateDirectory(path) else { return .failure(Unusable(reason: "\(path) is not a directory of this user with mode 0700")) }
        return .success(path)
    }

    struct Unusable: Error, Sendable { let reason: String }

    /// An absolute directory (not a link) owned by this user, with no access for group or others.
    static func isPrivateDirectory(_ path: String) -> Bool {
        var st = stat()
        guard path.hasPrefix("/"), lstat(path, &st) == 0 else { return false }
        return (st.st_mode & S_IFMT) == S_IFDIR && st.st_uid == geteuid() && (st.st_mode & 0o077) == 0
    }
}

/// Removes staged uploads 24 hours after they were made: a scan when the daemon starts (uploads of
/// an earlier run) and every hour while it runs. Only `openclaw-terminal-upload-*` directories of
/// this user are touched.
final class UploadSweeper: Sendable {
    static let retention: Duration = .seconds(24 * 3600)
    static let interval: Duration = .seconds(3600)

    let root: UploadRoot
    let clock: any NodeClock
    private let task = Locked<Task<Void, Never>?>(nil)
    private let log = Logger(component: "files")

    init(root: UploadRoot, clock: any NodeClock) { self.root = root; self.clock = clock }

    func start() {
        sweep()
        let t = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: Self.interval)
                if Task.isCancelled { return }
                self?.sweep()
            }
        }
        task.withLock { $0?.cancel(); $0 = t }
    }

    func stop() { task.withLock { $0?.cancel(); $0 = nil } }

    /// Removes what is older than the retention; returns the directories removed.
    @discardableResult
    func sweep() -> [String] {
        let now = Double(clock.wallMilliseconds) / 1000
        var removed: [String] = []
        for name in (try? FileSystem.contentsOfDirectory(root.path)) ?? [] where name.hasPrefix(TerminalUpload.directoryPrefix) {
            let dir = PathName.join(root.path, name)
            var st = stat()
            guard lstat(dir, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR, st.st_uid == geteuid() else { continue }
            let age = now - Double(st.st_mtim.tv_sec)
            guard age >= Double(Self.retention.components.seconds) else { continue }
            do { try FileSystem.remove(dir); removed.append(dir) } catch { log.warn("terminal upload clean-up: \(error)") }
        }
        if !removed.isEmpty { log.info("removed \(removed.count) terminal upload(s) older than 24 h") }
        return removed
    }
}
