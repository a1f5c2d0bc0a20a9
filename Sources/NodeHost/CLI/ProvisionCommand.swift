import Config
import GatewaySession
import Glibc
import NodeDaemon
import Support

/// `openclaw-node provision`: first-boot set-up from a file an image builder (Raspberry Pi Imager,
/// cloud-init, a script writing the SD card) left on the boot partition. The settings go into a
/// config drop-in, the setup code into the node's private state, and the file — on a FAT
/// partition every account can read — is removed. The package's openclaw-node-provision.service
/// runs it as root before the node starts, when such a file exists.
enum ProvisionCommand {
    static let help = """
        Usage: openclaw-node provision [--from FILE] [--enable] [--config FILE]

        Reads the first that exists of
          /boot/firmware/openclaw-node.json5   /boot/firmware/openclaw-node-setup.txt
          /boot/openclaw-node.json5            /boot/openclaw-node-setup.txt
        (or --from FILE):
          *.json5  config keys, as in config.json5, e.g.
                   { gateway: { setupCode: "oc-pair://…" }, node: { displayName: "Shelf Pi 3" } }
                   (a gateway.url, a shared gateway.token, capabilities: anything the config takes)
          *.txt    one line: a setup code, oc-pair:// link or one-time join URL
        and then
          - writes the settings (without the setup code) to config.d/10-provisioned.json5 beside the
            config file (/etc/openclaw-node/config.d/ for the service), mode 0640;
          - keeps the setup code in the state directory (setup-code, 0600; STATE_DIRECTORY or
            node.stateDir): the daemon pairs with it on its next start and deletes it once paired;
          - removes FILE, so the secret does not stay on the boot partition;
          - with --enable, enables and starts openclaw-node.service (systemd).
        A file with errors is left where it is and nothing is changed: exit 3 with each problem's
        file:line:col (2 for a JSON5 syntax error). No file: exit 0, nothing to do.
        """

    static let bootFiles = ["/boot/firmware/openclaw-node.json5", "/boot/firmware/openclaw-node-setup.txt",
                            "/boot/openclaw-node.json5", "/boot/openclaw-node-setup.txt"]
    static let dropInName = "10-provisioned.json5"

    static func main(_ args: [String]) throws -> Int32 {
        let a = try Arguments(args, valued: ["config", "from"], known: ["enable"])
        if a.flag("help") { Out.line(help); return ExitCode.ok.rawValue }
        guard let source = a.option("from") ?? bootFiles.first(where: FileSystem.exists) else {
            Out.line("provision: no provisioning file (\(bootFiles.joined(separator: ", "))); nothing to do")
            return ExitCode.ok.rawValue
        }
        let configPath = ConfigLoader.resolvePath(explicit: a.option("config")) ?? ConfigLoader.systemConfigFile
        let provided: Provided
        switch read(source) {
        case .success(let p): provided = p
        case .failure(let why):
            Out.err("provision: \(why.description)\nprovision: \(source) was left in place and nothing was changed; fix it and run `openclaw-node provision` again")
            return why.exitCode
        }
        // The settings (checked by `read`) as a drop-in; the merged config is checked once written.
        let dropIns = ConfigDropIns.directory(for: configPath)
        let target = dropIns + "/" + dropInName
        var text = "// Written by `openclaw-node provision` from \(source) (removed from there).\n"
        text += provided.settings.jsonString(pretty: true) + "\n"
        do {
            try FileSystem.createDirectory(dropIns, intermediates: true, mode: 0o755)
            // 0640: it may hold a shared gateway token; the service account's group reads it.
            try FileSystem.write(Array(text.utf8), to: target, mode: 0o640)
            if geteuid() == 0, let group = AccountName.groupId(ServiceUnit.packagedAccount) { _ = chown(target, 0, group) }
        } catch {
            Out.err("provision: cannot write \(target): \(error.reason)")
            return ExitCode.failure.rawValue
        }
        let config: NodeConfig
        do { config = try ConfigLoader.load(path: FileSystem.exists(configPath) ? configPath : target) } catch {
            try? FileSystem.remove(target)
            Out.err("provision: with \(target) the config is not valid:\n\(error.description)")
            return ExitCode.configInvalid.rawValue
        }
        if let code = provided.setupCode {
            do {
                if !FileSystem.isDirectory(config.stateDir) { try FileSystem.createDirectory(config.stateDir, intermediates: true, mode: 0o700) }
                try ProvisionedSetupCode.store(code, stateDir: config.stateDir)
            } catch {
                Out.err("provision: cannot keep the setup code in \(config.stateDir): \(error.reason)")
                return ExitCode.failure.rawValue
            }
        }
        // The secret leaves the boot partition (FAT: readable by every account, and by anyone who
        // takes the card out).
        if unlink(source) != 0 {
            Out.err("provision: the settings were taken, but \(source) could not be removed (\(String(cString: strerror(errno)))): delete it by hand, it holds the setup code")
            return ExitCode.failure.rawValue
        }
        sync()
        let named = [config.gateway.url.map { "gateway \($0)" }, provided.setupCode.map { _ in "a setup code" },
                     "display name \"\(config.displayName)\""].compactMap { $0 }
        Out.line("provision: took \(named.joined(separator: ", ")) from \(source) and removed it; settings in \(target)" +
                 (provided.setupCode != nil ? ", setup code in \(ProvisionedSetupCode.path(stateDir: config.stateDir))" : ""))
        if a.flag("enable") {
            if FileSystem.isDirectory("/run/systemd/system"),
               let p = try? Subprocess.spawn("/usr/bin/systemctl", ["enable", "--now", "--no-block", "openclaw-node.service"]), p.wait() == 0 {
                Out.line("provision: enabled and started openclaw-node.service")
            } else {
                Out.err("provision: could not enable openclaw-node.service (no systemd?): run `systemctl enable --now openclaw-node`")
            }
        }
        return ExitCode.ok.rawValue
    }

    struct Provided {
        var settings: JSONValue
        var setupCode: String?
    }

    struct ReadFailure: Error, CustomStringConvertible {
        let description: String
        let exitCode: Int32
    }

    /// The file's settings and setup code, checked: a JSON5 config document, or a text file whose
    /// one line is a setup code.
    static func read(_ path: String) -> Result<Provided, ReadFailure> {
        guard let bytes = FileSystem.readBytes(path), let text = String(validating: bytes, as: UTF8.self) else {
            return .failure(ReadFailure(description: "\(path): cannot read it as UTF-8 text", exitCode: ExitCode.failure.rawValue))
        }
        if !path.hasSuffix(".json5") && !path.hasSuffix(".json") {
            let lines = PairCommand.codeLines(text)
            guard lines.count == 1, (try? SetupCode.form(of: lines[0])) != nil else {
                return .failure(ReadFailure(description: "\(path): expected one line with a setup code, oc-pair:// link or join URL", exitCode: ExitCode.configInvalid.rawValue))
            }
            return .success(Provided(settings: .object([:]), setupCode: lines[0]))
        }
        do {
            _ = try ConfigLoader.parse(text, file: path)
        } catch {
            if case .syntax = error { return .failure(ReadFailure(description: error.description, exitCode: ExitCode.configSyntax.rawValue)) }
            return .failure(ReadFailure(description: error.description, exitCode: ExitCode.configInvalid.rawValue))
        }
        guard case .object(var all) = (try? JSON5Parser.parse(text, file: path))?.plain ?? .null else {
            return .failure(ReadFailure(description: "\(path): not an object", exitCode: ExitCode.configInvalid.rawValue))
        }
        var gateway = all["gateway"]?.objectValue ?? [:]
        let code = gateway.removeValue(forKey: "setupCode")?.stringValue
        if let code, (try? SetupCode.form(of: code)) == nil {
            return .failure(ReadFailure(description: "\(path): gateway.setupCode is not a setup code, oc-pair:// link or join URL", exitCode: ExitCode.configInvalid.rawValue))
        }
        if all["gateway"] != nil { all["gateway"] = gateway.isEmpty ? nil : .object(gateway) }
        return .success(Provided(settings: .object(all), setupCode: code))
    }
}
