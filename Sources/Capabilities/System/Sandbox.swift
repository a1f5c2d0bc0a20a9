import Support

/// `capabilities.system.sandbox: "bwrap"`: each command runs under bubblewrap with a read-only view
/// of the whole system, a private /tmp, its own PID namespace (killed whole with the run), no new
/// privileges, and optionally no network. Writable: the run's `cwd` and the configured paths. The
/// node's own state directory and config file are hidden, so a command cannot read the device key
/// or the gateway credentials. Upstream's Linux node host has no sandbox; this one is opt-in.
struct Sandbox: Sendable {
    enum Kind: String, CaseIterable, Sendable { case none, bwrap }

    var kind: Kind = .none
    var writable: [String] = []
    var network = true
    /// Hidden from commands: the node's state directory and its config file.
    var hiddenDirectories: [String] = []
    var hiddenFiles: [String] = []

    /// Where bwrap is, when the sandbox is on.
    static func bwrapPath() -> String? { ExecutableResolver.resolve("bwrap", path: nil, cwd: nil) }

    /// Why commands cannot run as configured (nil: they can).
    var problem: String? {
        guard kind == .bwrap else { return nil }
        if Self.bwrapPath() == nil {
            return "capabilities.system.sandbox is \"bwrap\" but bwrap is not installed (apt install bubblewrap)"
        }
        return nil
    }

    /// The executable and argv that run `argv` (already resolved to `executable`) in the sandbox.
    func wrap(executable: String, argv: [String], cwd: String?) -> (executable: String, argv: [String]) {
        guard kind == .bwrap, let bwrap = Self.bwrapPath() else { return (executable, argv) }
        var a = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--tmpfs", "/var/tmp"]
        for dir in hiddenDirectories { a += ["--tmpfs", dir] }
        for file in hiddenFiles { a += ["--ro-bind", "/dev/null", file] }
        for dir in ([cwd].compactMap { $0 } + writable) { a += ["--bind", dir, dir] }
        a += ["--unshare-pid", "--die-with-parent", "--new-session"]
        if !network { a += ["--unshare-net"] }
        a += ["--chdir", cwd ?? "/", "--", executable] + argv.dropFirst()
        return (bwrap, a)
    }
}
