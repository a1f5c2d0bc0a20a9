import Config
import ControlLink
import Kit
import Support

/// `openclaw-node reconnect`: tells the running daemon to connect again now — the way out of a
/// paused reconnect once the cause is fixed (docs/PROTOCOL.md §3.8).
enum ReconnectCommand {
    static let help = """
        Usage: openclaw-node reconnect [--json] [--config FILE]

        Makes the running daemon connect to its gateway again now. The daemon stops retrying
        ("paused" in `openclaw-node status`) when the gateway refuses it in a way that waiting
        cannot fix: this device awaits an operator's approval without a hint to keep asking, a
        credential is wrong or missing, the login is rate-limited, the protocol versions differ,
        or the TLS certificate does not match its pin. Fix the cause (approve the request with
        `openclaw devices approve <requestId>` on the gateway host, correct the config, …), then
        run this. A paused node also resumes by itself when the gateway reports the approval
        (node.pair.resolved), on SIGHUP (`systemctl reload openclaw-node`) and when a reload
        changes the gateway settings. When the daemon is merely waiting to retry, the wait is cut
        short; when it is connected, nothing changes. The daemon is found through its control
        socket in the config's stateDir. Exit 0 when the daemon was told, 1 when none runs.
        """

    static func main(_ args: [String]) throws -> Int32 {
        let a = try Arguments(args, valued: ["config"], known: ["json"])
        if a.flag("help") { Out.line(help); return ExitCode.ok.rawValue }
        let config = try CLI.loadConfig(a)
        guard let client = ControlClient.connect(stateDir: config.stateDir) else {
            Out.err("openclaw-node reconnect: no running daemon for stateDir \(config.stateDir) (start it with `openclaw-node run`)")
            return ExitCode.failure.rawValue
        }
        let reply = try client.request(["op": "reconnect"])
        guard reply["ok"]?.boolValue == true, let r = reply["reconnect"] else {
            Out.err(reply["error"]?["message"]?.stringValue ?? "the daemon refused")
            return ExitCode.failure.rawValue
        }
        if a.flag("json") { Out.json(r); return ExitCode.ok.rawValue }
        let resumed = r["resumed"]?.arrayValue?.compactMap(\.stringValue) ?? []
        Out.line(resumed.isEmpty ? "nothing was paused; the daemon retries now if it was waiting"
                                 : "resumed the paused \(resumed.joined(separator: " and ")) session")
        if let c = r["connection"]?.stringValue { Out.line("Connection:   \(c)") }
        return ExitCode.ok.rawValue
    }
}
