import Glibc
import Support

/// Where the full program is, seen from the launcher, and the hand-over to it.
enum FullProgram {
    /// Installed: /usr/bin/openclaw-node (this launcher) and /usr/lib/openclaw-node/openclaw-node
    /// beside the core and the bundles. In a build directory: openclaw-node beside
    /// openclaw-node-launcher. Never this program itself (an installed layout's sibling is).
    static func path() -> String? {
        guard let me = try? FileSystem.destinationOfSymbolicLink("/proc/self/exe") else { return nil }
        let dir = PathName.directory(me)
        let candidates = [PathName.join(dir, "../lib/openclaw-node/openclaw-node"), PathName.join(dir, "openclaw-node")]
        return candidates.first { candidate in
            guard let real = realpath(candidate, nil) else { return false }
            defer { free(real) }
            return String(cString: real) != me && Subprocess.isExecutableFile(candidate)
        }
    }

    /// Does not return when it works; why not when it does not.
    static func exec(_ arguments: [String]) -> String {
        guard let path = path() else {
            return "the node's program (lib/openclaw-node/openclaw-node beside this one's bin directory) is missing; reinstall the package"
        }
        let argv = arguments.map { strdup($0) } + [nil]
        execv(path, argv)
        return "cannot execute \(path): \(String(cString: strerror(errno)))"
    }
}
