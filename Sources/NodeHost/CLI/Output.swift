import Config
import Glibc
import Kit
import Store
import Support

/// stdout/stderr writers. (`print` to a pipe is buffered and lost if the process is killed.)
enum Out {
    static func line(_ s: String) { write(STDOUT_FILENO, s + "\n") }
    static func err(_ s: String) { write(STDERR_FILENO, s + "\n") }

    /// Plain write(2): FileHandle.write raises (and kills the process) when the reader went away,
    /// e.g. `openclaw-node discover | head -3`. Output to a closed pipe is dropped instead.
    private static func write(_ fd: Int32, _ s: String) {
        var bytes = Array(s.utf8)[...]
        while !bytes.isEmpty {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return }
            bytes = bytes.dropFirst(n)
        }
    }
    static func json(_ v: JSONValue, pretty: Bool = true) { line(v.jsonString(pretty: pretty)) }
}

/// Exit codes the CLI promises (documented in `--help`).
public enum ExitCode: Int32 {
    case ok = 0
    case failure = 1
    case usage = 64
    /// `config check`: JSON5 syntax error.
    case configSyntax = 2
    /// `config check`: valid JSON5 but not a valid config.
    case configInvalid = 3
}
