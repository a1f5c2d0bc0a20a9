import Config
import Glibc
import Kit
import NodeDaemon
import Support

/// `openclaw-node update`: upgrades this package from its own apt source, for the update timer.
enum UpdateCommand {
    static let help = """
        Usage: openclaw-node update [--if-due] [--config FILE]

        Upgrades openclaw-node (and openclaw-node-libcamera when installed) from the apt source
        named by node.autoUpdate.source, and from no other: apt-get update and apt-get install
        --only-upgrade read that one file (Dir::Etc::sourcelist), so nothing else on the machine is
        upgraded and no other repository is asked. The package's upgrade then asks the running node
        to restart once nothing runs (`openclaw-node restart`): invokes in flight, a talk
        conversation, a desktop stream finish first; the node keeps its identity and device token.
        apt directly rather than unattended-upgrades: it needs no other package or global policy,
        touches only this package, and the node's own config says when.
        --if-due  what openclaw-node-update.timer runs: nothing unless node.autoUpdate.enabled is
                  true, the local time is inside node.autoUpdate.window, and intervalHours have
                  passed since the last check.
        Needs root (apt). The result goes to the log, and to `openclaw-node status` (Last check).
        """

    static let packages = ["openclaw-node", "openclaw-node-libcamera"]

    static func main(_ args: [String]) throws -> Int32 {
        let a = try Arguments(args, valued: ["config"], known: ["if-due"])
        if a.flag("help") { Out.line(help); return ExitCode.ok.rawValue }
        let config = try CLI.loadConfig(a)
        let u = config.autoUpdate
        if a.flag("if-due") {
            guard u.enabled else { Out.line("update: node.autoUpdate.enabled is false; nothing to do"); return ExitCode.ok.rawValue }
            guard let inside = UpdateCheck.inWindow(u.window, minute: UpdateCheck.localMinute) else {
                Out.err("update: node.autoUpdate.window \"\(u.window)\" is not HH:MM-HH:MM"); return ExitCode.configInvalid.rawValue
            }
            guard inside else { Out.line("update: outside node.autoUpdate.window \(u.window); not now"); return ExitCode.ok.rawValue }
            if let last = UpdateCheck.read(stateDir: config.stateDir), WallClock.milliseconds - last.atMs < Int64(u.intervalHours) * 3_600_000 {
                Out.line("update: checked \((WallClock.milliseconds - last.atMs) / 60_000) min ago; next after \(u.intervalHours) h"); return ExitCode.ok.rawValue
            }
        }
        guard geteuid() == 0 else { Out.err("update: needs root (apt): sudo openclaw-node update"); return ExitCode.failure.rawValue }
        guard FileSystem.exists(u.source) else {
            let why = "no apt source at \(u.source) (node.autoUpdate.source): README \"A signed repository for a fleet\" shows one"
            Out.err("update: \(why)")
            UpdateCheck.record("failed: \(why)", stateDir: config.stateDir)
            return ExitCode.failure.rawValue
        }
        let only = ["-o", "Dir::Etc::sourcelist=\(u.source)", "-o", "Dir::Etc::sourceparts=-", "-o", "APT::Get::List-Cleanup=0"]
        let installed = packages.filter { version($0) != nil }
        let before = installed.map { "\($0) \(version($0) ?? "?")" }
        let fetch = run("/usr/bin/apt-get", ["update", "-q"] + only)
        guard fetch.status == 0 else {
            UpdateCheck.record("failed: apt-get update: \(fetch.lastLine)", stateDir: config.stateDir)
            Out.err("update: apt-get update failed:\n\(fetch.output)")
            return ExitCode.failure.rawValue
        }
        let upgrade = run("/usr/bin/apt-get", ["install", "--only-upgrade", "-y", "-q", "-o", "Dpkg::Options::=--force-confdef",
                                                "-o", "Dpkg::Options::=--force-confold"] + only + installed)
        guard upgrade.status == 0 else {
            UpdateCheck.record("failed: apt-get install: \(upgrade.lastLine)", stateDir: config.stateDir)
            Out.err("update: apt-get install failed:\n\(upgrade.output)")
            return ExitCode.failure.rawValue
        }
        let after = installed.map { "\($0) \(version($0) ?? "?")" }
        let result = before == after ? "up to date (\(after.joined(separator: ", ")))" : "upgraded \(before.joined(separator: ", ")) → \(after.joined(separator: ", "))"
        UpdateCheck.record(result, stateDir: config.stateDir)
        Out.line("update: \(result)")
        return ExitCode.ok.rawValue
    }

    /// The installed version of `package`, or nil.
    static func version(_ package: String) -> String? {
        let r = run("/usr/bin/dpkg-query", ["-W", "-f=${Status} ${Version}", package])
        let words = r.output.split(separator: " ")
        guard r.status == 0, words.count == 4, words[2] == "installed" else { return nil }
        return String(words[3])
    }

    /// Runs a program to its end with its output (stdout and stderr) captured.
    static func run(_ exe: String, _ args: [String]) -> (status: Int32, output: String, lastLine: String) {
        guard let dir = PrivateDirectory.makeTemporary(prefix: "ocn-update") else { return (-1, "cannot make a temporary folder", "") }
        defer { try? FileSystem.remove(dir) }
        let out = dir + "/output"
        var env = ProcessEnvironment.current
        env["DEBIAN_FRONTEND"] = "noninteractive"
        env["LC_ALL"] = "C.UTF-8"
        guard let p = try? Subprocess.spawn(exe, args, environment: env, stdout: .file(out), stderr: .file(out)) else {
            return (-1, "cannot run \(exe)", "cannot run \(exe)")
        }
        let status = p.wait()
        let text = FileSystem.readText(out) ?? ""
        return (status, text, text.split(separator: "\n").last.map(String.init) ?? "")
    }
}
