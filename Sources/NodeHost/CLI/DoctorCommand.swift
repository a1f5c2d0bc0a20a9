import Config
import FoundationEssentials
import Glibc
import HostPresence
import Kit
import Registry
import Runtime
import Store
import Support

/// `openclaw-node doctor`: checks config, state, each enabled capability's prerequisites and the
/// gateway, and prints the gateway allowlist snippet. Exit 0 when nothing is wrong, 1 otherwise.
enum DoctorCommand {
    static let help = """
        Usage: openclaw-node doctor [--json] [--config FILE]

        Checks the config, the state database and its permissions, every enabled capability, and
        the gateway (reachable, TLS, pairing), and prints the gateway config snippet that allows
        this node's commands. Exit code 0 when everything is fine, 1 when something is wrong.
        """

    static func main(_ args: [String], capabilities: @escaping CLI.CapabilityFactory) async throws -> Int32 {
        let a = try Arguments(args, valued: ["config"], known: ["json"])
        if a.flag("help") { Out.line(help); return ExitCode.ok.rawValue }
        let r = await Doctor.check(configPath: ConfigLoader.resolvePath(explicit: a.option("config")), capabilities: capabilities)
        return report(r.findings, snippet: r.manifest.map(GatewayAllowlist.snippet), json: a.flag("json"),
                      filtered: r.manifest.map(GatewayAllowlist.filtered) ?? [])
    }

    static func report(_ findings: [Doctor.Finding], snippet: String?, json: Bool, filtered: [String] = []) -> Int32 {
        let failed = findings.contains { $0.level == .fail }
        if json {
            var o: [String: JSONValue] = [
                "ok": .bool(!failed),
                "findings": .array(findings.map { ["level": .string($0.level.rawValue), "area": .string($0.area), "text": .string($0.text)] }),
                "allowCommands": .array(filtered.map { .string($0) }),
            ]
            if let snippet { o["allowlistSnippet"] = .string(snippet) }
            Out.json(.object(o))
        } else {
            for f in findings { Out.line("[\(f.level.rawValue.padded(to: 4))] \(f.area): \(f.text)") }
            if let snippet, !filtered.isEmpty {
                Out.line("\nMost node commands are not in a Linux gateway's default allowlist. Add them on the gateway:")
                Out.line(snippet)
            }
            Out.line(failed ? "\nSomething needs attention (see FAIL above)." : "\nAll checks passed.")
        }
        return failed ? ExitCode.failure.rawValue : ExitCode.ok.rawValue
    }
}
