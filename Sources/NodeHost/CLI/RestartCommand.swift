import Config
import ControlLink
import Glibc
import Kit
import Support

/// `openclaw-node restart`: asks the running daemon to restart when nothing runs (GracefulRestart).
enum RestartCommand {
    static let help = """
        Usage: openclaw-node restart [--max-wait SECONDS] [--now] [--wait] [--reason TEXT] [--json] [--config FILE]

        Asks the running daemon to start again — to load a new version after an upgrade, or new
        settings that a reload cannot apply — at the first moment nothing runs: no invoke in flight
        (a system.run, a recording, a desktop stream), no talk conversation or held push-to-talk
        capture. What runs finishes; the node keeps serving until then. It then stops cleanly and
        starts again in the same process (same PID for systemd), with the same device identity
        and device token: the gateway sees one reconnect, and no pairing. The package's upgrade
        uses this instead of a hard restart.
          --max-wait SECONDS  restart anyway after this long, cancelling what still runs (default 3600)
          --now               do not wait: cancel what runs and restart at once
          --wait              return only once the daemon is back (or --max-wait + 60 s passed)
        Exit 0 when the daemon took the request (with --wait: when it is back), 1 when no daemon runs.
        """

    static func main(_ args: [String]) throws -> Int32 {
        let a = try Arguments(args, valued: ["config", "max-wait", "reason"], known: ["now", "wait", "json"])
        if a.flag("help") { Out.line(help); return ExitCode.ok.rawValue }
        let maxWait: Int
        if a.flag("now") { maxWait = 0 } else if let text = a.option("max-wait") {
            guard let n = Int(text), (0...86_400).contains(n) else { throw Arguments.Failure(description: "--max-wait must be 0 to 86400 seconds") }
            maxWait = n
        } else { maxWait = 3600 }
        let config = try CLI.loadConfig(a)
        guard let client = ControlClient.connect(stateDir: config.stateDir) else {
            Out.err("openclaw-node restart: no running daemon for stateDir \(config.stateDir) (start it with `openclaw-node run`)")
            return ExitCode.failure.rawValue
        }
        let before = try client.request(["op": "status"])["status"]?["startedAtMs"]
        let reply = try client.request(["op": "restart", "maxWaitSeconds": .number(Double(maxWait)),
                                        "reason": .string(a.option("reason") ?? "openclaw-node restart")])
        guard reply["ok"]?.boolValue == true, let r = reply["restart"] else {
            Out.err(reply["error"]?["message"]?.stringValue ?? "the daemon refused (an older version without graceful restart?)")
            return ExitCode.failure.rawValue
        }
        if a.flag("json") && !a.flag("wait") { Out.json(r); return ExitCode.ok.rawValue }
        let waiting = r["waitingFor"]?.arrayValue?.compactMap(\.stringValue) ?? []
        // With --json only JSON is printed: the status of the daemon that came back.
        if !a.flag("json") {
            Out.line(waiting.isEmpty ? "restart asked for: the daemon restarts as soon as nothing runs"
                                     : "restart asked for: waiting for \(waiting.joined(separator: ", "))")
        }
        guard a.flag("wait") else { return ExitCode.ok.rawValue }
        let deadline = ContinuousClock.now + .seconds(maxWait + 60)
        // The restart closes every connection of the old daemon: waiting for that close is waiting
        // for the restart itself, however long the running invokes take. A connection is also
        // closed when idle for the socket's limit (30 s); then the old daemon still answers, and
        // its fresh connection is held in turn.
        var held: ControlClient? = client
        while ContinuousClock.now < deadline {
            if let c = held {
                _ = c.waitUntilClosed(until: deadline)
                held = nil
            }
            // Between the old image closing and the new one listening, nothing can be waited on
            // but the socket file's return: a short pause between attempts, for that moment only.
            guard let c = ControlClient.connect(stateDir: config.stateDir),
                  let status = try? c.request(["op": "status"])["status"] else { Pause.for(.milliseconds(50)); continue }
            guard status["startedAtMs"] != before else { held = c; continue }
            if a.flag("json") { Out.json(status) } else { Out.line("the daemon is back: pid \(status["pid"]?.intValue ?? 0), version \(status["version"]?.stringValue ?? "?")") }
            return ExitCode.ok.rawValue
        }
        Out.err("openclaw-node restart: the daemon did not come back within \(maxWait + 60) s (journalctl -u openclaw-node)")
        return ExitCode.failure.rawValue
    }
}
