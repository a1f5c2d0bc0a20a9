import Config
import ControlLink
import Glibc
import Kit
import Store
import Support

/// stdout/stderr writers (ControlLink's StandardStreams: write(2), nothing lost to buffering,
/// a reader that went away is not fatal).
enum Out {
    static func line(_ s: String) { StandardStreams.line(s, to: STDOUT_FILENO) }
    static func err(_ s: String) { StandardStreams.line(s, to: STDERR_FILENO) }
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
