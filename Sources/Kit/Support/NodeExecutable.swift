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
}
