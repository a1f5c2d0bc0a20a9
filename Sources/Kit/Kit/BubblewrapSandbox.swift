import Glibc
import Support

/// bubblewrap confinement for what the node runs for someone else: `capabilities.system.sandbox:
/// "bwrap"` (each system.run command) and an MCP server's `sandbox: "bwrap"`. It runs under bubblewrap with a read-only view
/// of the whole system, a private /tmp, its own PID namespace (killed whole with the run), no new
/// privileges, and optionally no network. Writable: the run's `cwd` and the configured paths. The
/// node's own state directory and config file are hidden, so a command cannot read the device key
/// or the gateway credentials. Upstream's Linux node host has no sandbox; this one is opt-in.
///
/// What keeps it closed whatever a request says (docs/SECURITY.md):
/// - a writable path is canonical (symlinks resolved) and is never `/`, a home directory, a
///   directory that holds a home, the state directory or the config, nor inside a hidden path;
/// - the hiding binds come after every writable bind, so a bind can never uncover them;
/// - `sandboxNetwork: false` also means no Unix sockets: a private /run (the session bus, the
///   systemd user manager) and a seccomp filter that refuses `socket(AF_UNIX)` (sockets in the
///   home, abstract sockets), on top of the network namespace.
public struct Sandbox: Sendable {
    public init() {}
    public enum Kind: String, CaseIterable, Sendable { case none, bwrap }

    public var kind: Kind = .none
    public var writable: [String] = []
    public var network = true
    /// Hidden from commands: the node's state directory and its config file (canonical paths).
    public var hiddenDirectories: [String] = []
    public var hiddenFiles: [String] = []
    /// Home directories a writable path may not be or contain (the daemon's, and the password database's).
    public var homes: [String] = Sandbox.homeDirectories()

    /// Where bwrap is, when the sandbox is on.
    public static func bwrapPath() -> String? { Subprocess.findExecutable("bwrap", path: searchPath) }
    /// Where bwrap is looked for: the system's directories, never the daemon's own $PATH (which a
    /// user's ~/bin could shadow).
    public static let searchPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

    /// Why commands cannot run as configured (nil: they can); `setting` names the config key of
    /// the writable paths in the message.
    public func problem(setting: String) -> String? {
        guard kind == .bwrap else { return nil }
        if Self.bwrapPath() == nil {
            return "\(setting).sandbox is \"bwrap\" but bwrap is not installed (apt install bubblewrap)"
        }
        for dir in writable {
            if let why = refusal(dir) { return "\(setting).sandboxWritable: \(why)" }
        }
        return nil
    }

    /// Why `path` may not be made writable in the sandbox (nil: it may). Checked on the canonical
    /// path, so a symlink to the home or the state directory is refused like the directory itself.
    public func refusal(_ path: String) -> String? {
        guard path.hasPrefix("/") else { return "\"\(path)\" is not an absolute path" }
        let real = PathName.resolvingSymlinks(path)
        // Named as written: where a link leads is not told to whoever sent the path.
        let shown = "\"\(path)\""
        if real == "/" { return "\(shown) is the root directory; give the command a project directory" }
        for hidden in hiddenDirectories + hiddenFiles {
            if PathName.isWithin(real, hidden) { return "\(shown) contains the node's state or config (\(hidden)), which commands must not see" }
            if PathName.isWithin(hidden, real) { return "\(shown) is inside the node's state directory (\(hidden))" }
        }
        for home in homes where PathName.isWithin(real, home) {
            return "\(shown) is \(real == home ? "" : "above ")a home directory (\(home)); use a directory inside it, such as a project folder"
        }
        return nil
    }

    /// The executable and argv that run `argv` (already resolved to `executable`) in the sandbox,
    /// or the refusal naming the path. `seccompFD` is the descriptor number the filter is read from.
    public func wrap(executable: String, argv: [String], cwd: String?, seccompFD: Int32?) -> Result<(executable: String, argv: [String]), Refused> {
        guard kind == .bwrap, let bwrap = Self.bwrapPath() else { return .success((executable, argv)) }
        if let cwd, let why = refusal(cwd) { return .failure(Refused(message: "cwd \(why)")) }
        for dir in writable { if let why = refusal(dir) { return .failure(Refused(message: "sandboxWritable \(why)")) } }
        var a = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--tmpfs", "/var/tmp"]
        if !network { a += ["--tmpfs", "/run"] }
        let binds = [cwd].compactMap { $0 } + writable
        for dir in binds { a += ["--bind", dir, dir] }
        // Last, so that no bind above can uncover them.
        for dir in hiddenDirectories { a += ["--tmpfs", dir] }
        // Each hidden file with the backups an editor left beside it since (ConfigSiblings).
        for file in Set(hiddenFiles.flatMap { ConfigSiblings.existing($0) }).sorted() where FileSystem.exists(file) {
            a += ["--ro-bind", "/dev/null", file]
        }
        a += ["--unshare-pid", "--die-with-parent", "--new-session"]
        if !network { a += ["--unshare-net"] }
        if let seccompFD { a += ["--seccomp", String(seccompFD)] }
        a += ["--chdir", cwd ?? "/", "--", executable] + argv.dropFirst()
        return .success((bwrap, a))
    }

    /// Whether runs need the Unix-socket filter.
    public var needsSeccomp: Bool { kind == .bwrap && !network }

    public struct Refused: Error, Sendable { public let message: String }

    /// The daemon's home and every home directory of the password database (canonical).
    public static func homeDirectories() -> [String] {
        var out = Set<String>()
        out.insert(PathName.resolvingSymlinks(PathName.home(ProcessEnvironment.current)))
        setpwent()
        while let pw = getpwent() {
            guard let d = pw.pointee.pw_dir else { continue }
            let dir = String(cString: d)
            // Service accounts' "homes" such as / or /nonexistent are not homes to protect here.
            if dir.count > 1, dir != "/nonexistent", FileSystem.exists(dir) {
                out.insert(PathName.resolvingSymlinks(dir))
            }
        }
        endpwent()
        out.remove("/")
        return out.sorted()
    }
}
