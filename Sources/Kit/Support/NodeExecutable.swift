/// The openclaw-node executable, for the helper processes the node starts from itself (the
/// process-tree reaper of system.run, the video encoder): this process's own when it is
/// openclaw-node, else the openclaw-node beside it (a test runner in the build directory).
/// nil: none found.
public enum NodeExecutable {
    public static var path: String? {
        guard let exe = try? FileSystem.destinationOfSymbolicLink("/proc/self/exe") else { return nil }
        if PathName.lastComponent(exe) == "openclaw-node" { return exe }
        let beside = PathName.join(PathName.directory(exe), "openclaw-node")
        return Subprocess.isExecutableFile(beside) ? beside : nil
    }

    /// The command a user or another program should run (what `mcp config` writes for MCP
    /// clients): installed, the launcher bin/openclaw-node in front of this program, which lives in
    /// lib/openclaw-node/ (docs/ARCHITECTURE.md, "The launcher"); else this program.
    public static var command: String? {
        guard let exe = path else { return nil }
        let lib = PathName.directory(exe)
        guard PathName.lastComponent(lib) == "openclaw-node", PathName.lastComponent(PathName.directory(lib)) == "lib" else { return exe }
        let launcher = PathName.join(PathName.directory(PathName.directory(lib)), "bin/openclaw-node")
        return Subprocess.isExecutableFile(launcher) ? launcher : exe
    }
}
