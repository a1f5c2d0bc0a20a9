import Foundation

/// stdout/stderr writers. (`print` to a pipe is buffered and lost if the process is killed.)
enum Out {
    static func line(_ s: String) { FileHandle.standardOutput.write(Data((s + "\n").utf8)) }
    static func err(_ s: String) { FileHandle.standardError.write(Data((s + "\n").utf8)) }
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
