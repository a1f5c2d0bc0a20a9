import Glibc
import Support

/// Starting the daemon again in the same process (a graceful restart): execve of the program by
/// the path it was started from — after a package upgrade that is the new version, where
/// /proc/self/exe would still name the old, deleted file — with the same arguments, and the
/// environment it was started with: the gateway secrets NodeSecrets took out of this process's
/// environment go back in, or the new daemon could not log in. Same PID, so systemd (Type=notify)
/// and anything watching the PID see one process that reloaded.
public enum SelfExec {
    /// The program's path as started, made absolute now (before anything changes directory).
    public static let program: String? = {
        guard let arg0 = CommandLine.arguments.first else { return nil }
        if arg0.hasPrefix("/") { return arg0 }
        if arg0.contains("/") { return PathName.join(FileSystem.currentDirectory, arg0) }
        return Subprocess.findExecutable(arg0)
    }()

    /// Does not return when it works; the reason when it does not.
    public static func restart() -> String {
        guard let path = program else { return "cannot tell which program to start again" }
        let env = ProcessEnvironment.current.merging(NodeSecrets.secrets) { _, secret in secret }
        let argv = CommandLine.arguments.map { strdup($0) } + [nil]
        let envp = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        // A blocked signal stays blocked across execve: the new daemon must get its SIGTERM.
        var none = sigset_t()
        sigemptyset(&none)
        pthread_sigmask(SIG_SETMASK, &none, nil)
        execve(path, argv, envp)
        let why = String(cString: strerror(errno))
        for p in argv { free(p) }
        for p in envp { free(p) }
        return "cannot execute \(path): \(why)"
    }
}
