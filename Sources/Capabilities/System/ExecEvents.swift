import Kit
import Support

/// The node events a run produces (docs/PROTOCOL.md §6.4, "Events"), shaped as upstream's node
/// host sends them.
enum ExecEvents {
    /// Upstream's tail length for exec.finished output.
    static let outputTailChars = 20_000

    static func denied(sessionKey: String, runId: String, command: String, reason: String) -> JSONValue {
        ["sessionKey": .string(sessionKey), "runId": .string(runId), "host": "node", "command": .string(command), "reason": .string(reason)]
    }

    static func finished(sessionKey: String, runId: String, command: String, outcome: CommandRunner.Outcome,
                         suppressNotifyOnExit: Bool?) -> JSONValue {
        var o: [String: JSONValue] = [
            "sessionKey": .string(sessionKey), "runId": .string(runId), "host": "node", "command": .string(command),
            "timedOut": .bool(outcome.timedOut), "success": .bool(outcome.success),
            "output": .string(tail([outcome.stdout, outcome.stderr, outcome.error ?? ""].joined(separator: "\n"))),
        ]
        if let code = outcome.exitCode { o["exitCode"] = .number(Double(code)) }
        if let s = suppressNotifyOnExit { o["suppressNotifyOnExit"] = .bool(s) }
        return .object(o)
    }

    /// The last `outputTailChars` characters of the trimmed text, marked when cut.
    static func tail(_ text: String) -> String {
        let t = text.trimmed()
        guard t.count > outputTailChars else { return t }
        return "... (truncated) " + String(t.suffix(outputTailChars))
    }
}
