import Config
import ControlLink
import HostPresence
import Kit
import Store
import Support

/// `openclaw-node presence foreground|background|auto`: tells the running daemon.
enum PresenceCommand {
    static let help = """
        Usage: openclaw-node presence [foreground|background|auto] [--config FILE]

        Pins the running daemon's presence (foreground lets camera/screen/canvas run, background
        refuses them with NODE_BACKGROUND_UNAVAILABLE) or returns it to presence.mode ("auto").
        With no argument, prints the current state. The daemon is found through its control socket in
        the config's stateDir.
        """

    static func main(_ args: [String]) throws -> Int32 {
        let a = try Arguments(args, valued: ["config"], known: ["json"])
        if a.flag("help") { Out.line(help); return ExitCode.ok.rawValue }
        let set = a.positionals.first
        if let set, !["foreground", "background", "auto"].contains(set) {
            throw Arguments.Failure(description: "expected foreground, background or auto, got \"\(set)\"")
        }
        let config = try CLI.loadConfig(a)
        guard let client = ControlClient.connect(stateDir: config.stateDir) else {
            Out.err("openclaw-node presence: no running daemon for stateDir \(config.stateDir) (start it with `openclaw-node run`)")
            return ExitCode.failure.rawValue
        }
        var req: [String: JSONValue] = ["op": "presence"]
        if let set { req["set"] = .string(set) }
        let reply = try client.request(.object(req))
        guard reply["ok"]?.boolValue == true else {
            Out.err(reply["error"]?["message"]?.stringValue ?? "the daemon refused")
            return ExitCode.failure.rawValue
        }
        if a.flag("json") { Out.json(reply); return ExitCode.ok.rawValue }
        Out.line("\(reply["presence"]?.stringValue ?? "?") (\(reply["reason"]?.stringValue ?? ""))")
        return ExitCode.ok.rawValue
    }
}
