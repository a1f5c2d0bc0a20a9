import Config
import Glibc
import HostPresence
import Kit
import NodeDaemon
import Registry
import Store
import Support

/// `openclaw-node doctor`: checks config, state, each enabled capability's prerequisites and the
/// gateway, and prints the gateway allowlist snippet. Exit 0 when nothing is wrong, 1 otherwise.
enum DoctorCommand {
    static let help = """
        Usage: openclaw-node doctor [--json] [--config FILE]

        Checks the config, the state database and its permissions, every enabled capability, and
        the gateway (reachable, TLS, pairing). Then says, per command, what a current gateway does
        with it on Linux: allowed by default, allowed by the gateway's Canvas plugin, allowed once
        an operator approves the node's command surface, or only with gateway.nodes.commands.allow
        (which it prints as a snippet). A capability that is enabled but has no device here is a
        warning with what to do. Exit code 0 when nothing failed, 1 when something must be fixed.
        """

    static func main(_ args: [String], capabilities: @escaping CLI.CapabilityFactory) async throws -> Int32 {
        let a = try Arguments(args, valued: ["config"], known: ["json"])
        if a.flag("help") { Out.line(help); return ExitCode.ok.rawValue }
        let r = await Doctor.check(configPath: ConfigLoader.resolvePath(explicit: a.option("config")), capabilities: capabilities)
        return report(r, json: a.flag("json"))
    }

    static func report(_ r: Doctor.Report, json: Bool) -> Int32 {
        let failed = r.failed
        let policy = GatewayAllowlist.classify(r.advertised)
        let needsAllow = GatewayAllowlist.needsAllow(r.advertised)
        let snippet = r.manifest == nil ? nil : GatewayAllowlist.snippet(r.advertised)
        if json {
            var o: [String: JSONValue] = [
                "ok": .bool(!failed),
                "findings": .array(r.findings.map { ["level": .string($0.level.rawValue), "area": .string($0.area), "text": .string($0.text)] }),
                "gatewayPolicy": .object(Dictionary(uniqueKeysWithValues: policy.map { ($0.command, JSONValue.string($0.policy.rawValue)) })),
                "allowCommands": .array(needsAllow.map { .string($0) }),
                "allowCommandsOlderGateways": .array(GatewayAllowlist.needsAllowOlder(r.advertised).map { .string($0) }),
            ]
            if let snippet { o["allowlistSnippet"] = .string(snippet) }
            Out.json(.object(o))
        } else {
            for f in r.findings { Out.line("[\(f.level.rawValue.padded(to: 4))] \(f.area): \(f.text)") }
            if !policy.isEmpty {
                Out.line("\nWhat a current OpenClaw gateway does with this node's commands (platform linux):")
                for p in GatewayAllowlist.Policy.allCases {
                    let commands = policy.filter { $0.policy == p }.map(\.command)
                    if !commands.isEmpty { Out.line("  \(p.heading):\n    \(commands.joined(separator: ", "))") }
                }
            }
            if let snippet, !needsAllow.isEmpty {
                Out.line("\nAdd to the gateway's config:")
                Out.line(snippet)
                Out.line("\n" + GatewayAllowlist.afterChangingNote)
            }
            Out.line(failed ? "\nSomething needs attention (see FAIL above)." : "\nAll checks passed.")
        }
        return failed ? ExitCode.failure.rawValue : ExitCode.ok.rawValue
    }
}
