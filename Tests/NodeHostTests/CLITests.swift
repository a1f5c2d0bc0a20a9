@testable import Config
import Foundation
@testable import GatewaySession
@testable import HostPresence
@testable import Kit
@testable import NodeCLI
@testable import Registry
@testable import Store
@testable import Support
@testable import TestSupport
import Testing

/// The real `openclaw-node` binary, end to end.
@Suite struct CLITests {
    /// A reader that is gone (`| true`, `| head`) must not crash the CLI (FileHandle.write raised).
    @Test func outputToAClosedPipeIsDroppedQuietly() throws {
        let e = CLIEnv(); defer { e.cleanup() }
        let script = "'\(TestPaths.nodeBinary)' caps --config '\(e.config)' | true; exit ${PIPESTATUS[0]}"
        let r = try runProcess("/bin/bash", ["-c", script], env: e.vars)
        #expect(r.code == 0, "\(r.stderr)")
        #expect(!r.stderr.contains("Fatal error"), "\(r.stderr)")
    }

    @Test func invokeDeviceInfoPrintsRealValues() throws {
        let e = CLIEnv(); defer { e.cleanup() }
        let r = try e.run(["invoke", "device.info", "--config", e.config])
        #expect(r.code == 0, "\(r.stderr)")
        let v = try #require(JSONValue.parse(r.stdout))
        for key in ["deviceName", "modelIdentifier", "systemName", "systemVersion", "appVersion", "appBuild", "locale"] {
            #expect(v[key]?.stringValue?.isEmpty == false, "missing \(key)")
        }
        #expect(v["deviceName"]?.stringValue == NodeConfig.hostname())
    }

    @Test func invokeDeviceStatusPrintsRealValues() throws {
        let e = CLIEnv(); defer { e.cleanup() }
        let r = try e.run(["invoke", "device.status", "--config", e.config])
        #expect(r.code == 0, "\(r.stderr)")
        let v = try #require(JSONValue.parse(r.stdout))
        #expect((v["storage"]?["totalBytes"]?.doubleValue ?? 0) > 0)
        #expect((v["uptimeSeconds"]?.doubleValue ?? 0) > 0)
        #expect(v["thermal"]?["state"]?.stringValue != nil)
        #expect(v["network"]?["status"]?.stringValue != nil)
    }

    @Test func unknownCommandExitsOneWithInvalidRequest() throws {
        let e = CLIEnv(); defer { e.cleanup() }
        let r = try e.run(["invoke", "nope.nope", "--config", e.config])
        #expect(r.code == 1)
        let v = try #require(JSONValue.parse(r.stdout))
        #expect(v["code"] == "INVALID_REQUEST")
        #expect(v["message"]?.stringValue?.hasPrefix("INVALID_REQUEST: ") == true)
    }

    @Test func disabledCapabilityThroughCLI() throws {
        let e = CLIEnv("capabilities: { device: { enabled: false } }"); defer { e.cleanup() }
        let r = try e.run(["invoke", "device.info", "--config", e.config])
        #expect(r.code == 1)
        #expect(JSONValue.parse(r.stdout)?["code"] == "DEVICE_DISABLED")
    }

    /// Every command of every bundle that is off answers for its own bundle, from the manifest's
    /// rows (device.apps belongs to computer, chat.push to talk) — never "unknown command".
    @Test func everyCommandOfADisabledBundleSaysItIsDisabled() throws {
        let off = BundleCatalog.current.bundles
        let e = CLIEnv("capabilities: { \(off.map { "\($0.name): { enabled: false }" }.joined(separator: ", ")) }"); defer { e.cleanup() }
        var checked = 0
        for m in off {
            for c in m.commands {
                let r = try e.run(["invoke", c.name, "--config", e.config])
                #expect(r.code == 1)
                #expect(JSONValue.parse(r.stdout)?["code"] == .string("\(m.name.uppercased())_DISABLED"), "\(c.name): \(r.stdout)")
                checked += 1
            }
        }
        #expect(checked >= 25 && off.contains { $0.commands.contains { $0.name == "device.apps" } }
                && off.contains { $0.commands.contains { $0.name == "chat.push" } })
    }

    @Test func badParamsJSONIsInvalidRequest() throws {
        let e = CLIEnv(); defer { e.cleanup() }
        let r = try e.run(["invoke", "device.info", "--params", "{oops", "--config", e.config])
        #expect(r.code == 1)
        #expect(JSONValue.parse(r.stdout)?["code"] == "INVALID_REQUEST")
    }

    @Test func statusKeepsTheSameDeviceIdAndDatabaseIs0600() throws {
        let e = CLIEnv(); defer { e.cleanup() }
        let a = try e.run(["status", "--json", "--config", e.config])
        let b = try e.run(["status", "--json", "--config", e.config])
        #expect(a.code == 0 && b.code == 0, "\(a.stderr)\(b.stderr)")
        let va = try #require(JSONValue.parse(a.stdout)), vb = try #require(JSONValue.parse(b.stdout))
        #expect(va["deviceId"]?.stringValue?.count == 64)
        #expect(va["deviceId"] == vb["deviceId"])
        #expect(va["publicKey"] == vb["publicKey"])
        #expect(va["databaseMode"] == "0600")
        #expect(va["stateDir"]?.stringValue == e.dir + "/state")
        let attrs = try FileManager.default.attributesOfItem(atPath: e.dir + "/state/state.db")
        #expect((attrs[.posixPermissions] as? NSNumber)?.intValue == 0o600)
    }

    @Test func capsJSONIsDerivedFromTheTable() throws {
        let e = CLIEnv(); defer { e.cleanup() }
        let r = try e.run(["caps", "--json", "--config", e.config])
        #expect(r.code == 0)
        let v = try #require(JSONValue.parse(r.stdout))
        let table = v["table"]?.arrayValue ?? []
        // commands = the advertised rows of the table, in table order; device always, canvas where
        // Chromium is installed, camera/screen/location not on this test machine.
        #expect(v["commands"] == .array(table.filter { $0["advertised"] == true }.compactMap { $0["name"] }))
        #expect(v["caps"]?.arrayValue?.first == "device")
        #expect(v["commands"]?.arrayValue?.contains("device.info") == true)
        #expect(table.contains { $0["name"] == "camera.snap" && $0["dangerous"] == true && $0["advertised"] == false })
        #expect(v["notAdvertised"]?.arrayValue?.contains { $0.stringValue?.hasPrefix("camera:") == true } == true)
    }

    @Test func configCheckExitCodes() throws {
        let e = CLIEnv(); defer { e.cleanup() }
        let ok = try e.run(["config", "check", TestPaths.repoRoot + "/config.json5"])
        #expect(ok.code == 0, "\(ok.stderr)")
        let syntax = e.dir + "/syntax.json5"
        _ = FileManager.default.createFile(atPath: syntax, contents: Data("{\n  a: 1,,\n}".utf8))
        let s = try e.run(["config", "check", syntax])
        #expect(s.code == 2)
        #expect(s.stderr.contains("\(syntax):2:"))
        let array = e.dir + "/array.json5"
        _ = FileManager.default.createFile(atPath: array, contents: Data("[1, 2]".utf8))
        #expect(try e.run(["config", "check", array]).code == 3)
        let unknown = e.dir + "/unknown.json5"
        _ = FileManager.default.createFile(atPath: unknown, contents: Data("{ gatway: {} }".utf8))
        let u = try e.run(["config", "check", unknown])
        #expect(u.code == 3)
        #expect(u.stderr.contains("gatway: unknown key. Did you mean \"gateway\"?"))
        #expect(try e.run(["config", "check", e.dir + "/missing.json5"]).code == 1)
    }

    /// Drop-ins through the real binary: `config check` names them, `config show --origin` says
    /// which file set each key (secrets shown as "(set)"), a bad drop-in fails with its position,
    /// and doctor names each drop-in's keys and a drop-in that leaks the token to other accounts.
    @Test func dropInsInCheckShowAndDoctor() throws {
        let e = CLIEnv("gateway: { url: 'ws://127.0.0.1:9' }"); defer { e.cleanup() }
        let d = e.dir + "/config.d"
        try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true)
        try "{ gateway: { url: 'ws://127.0.0.1:10', token: 'tok-123' } }".write(toFile: d + "/10-gw.json5", atomically: true, encoding: .utf8)
        chmod(d + "/10-gw.json5", 0o644)
        try "{ node: { displayName: 'Shelf' } }".write(toFile: d + "/20-name.json5", atomically: true, encoding: .utf8)
        let check = try e.run(["config", "check", e.config])
        #expect(check.code == 0 && check.stdout.contains("with 2 drop-ins (10-gw.json5, 20-name.json5): OK (gateway: ws://127.0.0.1:10"), "\(check.stdout)\(check.stderr)")
        let show = try e.run(["config", "show", "--origin", "--config", e.config])
        #expect(show.code == 0, "\(show.stderr)")
        #expect(show.stdout.contains("gateway.url = \"ws://127.0.0.1:10\"  # \(d)/10-gw.json5:1:19"), "\(show.stdout)")
        #expect(show.stdout.contains("gateway.token = (set)  # \(d)/10-gw.json5:1:"), "\(show.stdout)")
        #expect(show.stdout.contains("node.displayName = \"Shelf\"  # \(d)/20-name.json5:1:"), "\(show.stdout)")
        #expect(show.stdout.contains("presence.mode = \"manual\"  # \(e.config):1:"), "\(show.stdout)")
        #expect(!show.stdout.contains("tok-123"))
        let doctor = try e.run(["doctor", "--config", e.config])
        #expect(doctor.stdout.contains("drop-in \(d)/10-gw.json5 sets gateway.url, gateway.token"), "\(doctor.stdout)")
        #expect(doctor.stdout.contains("drop-in \(d)/20-name.json5 sets node.displayName"), "\(doctor.stdout)")
        #expect(doctor.stdout.contains("\(d)/10-gw.json5 holds the gateway's token and is readable by every account"), "\(doctor.stdout)")

        try "{ node: { displayName: 7 } }".write(toFile: d + "/30-bad.json5", atomically: true, encoding: .utf8)
        let bad = try e.run(["config", "show", "--config", e.config])
        #expect(bad.code == 3 && bad.stderr.contains("\(d)/30-bad.json5:1:24: node.displayName: expected a string"), "\(bad.stderr)")
        #expect(bad.stdout.isEmpty)
        let run = try e.run(["status", "--config", e.config])
        #expect(run.code == 1 && run.stderr.contains("30-bad.json5:1:24"), "\(run.stderr)")
    }

    @Test func helpOnEveryCommand() throws {
        let e = CLIEnv(); defer { e.cleanup() }
        for cmd in [["--help"], ["run", "--help"], ["invoke", "--help"], ["caps", "--help"], ["status", "--help"],
                    ["config", "--help"], ["presence", "--help"]] {
            let r = try e.run(cmd)
            #expect(r.code == 0, "\(cmd)")
            #expect(r.stdout.contains("Usage:"), "\(cmd)")
        }
        let bad = try e.run(["invok"])
        #expect(bad.code == 64)
        #expect(bad.stderr.contains("did you mean invoke?"))
    }

    @Test func invalidConfigStopsWithClearMessage() throws {
        let e = CLIEnv(); defer { e.cleanup() }
        let bad = e.dir + "/bad.json5"
        _ = FileManager.default.createFile(atPath: bad, contents: Data("{ presence: { mode: 'sometimes' } }".utf8))
        let r = try e.run(["invoke", "device.info", "--config", bad])
        #expect(r.code == 1)
        #expect(r.stderr.contains("presence.mode"))
    }

    /// The daemon: control socket (0600), presence switching, invoke through the socket, status,
    /// refusal of a second daemon on the same stateDir, clean SIGTERM.
    @Test func daemonServesControlSocket() throws {
        let e = CLIEnv(); defer { e.cleanup() }
        let daemon = try BackgroundProcess(TestPaths.nodeBinary, ["run", "--config", e.config], env: e.vars)
        defer { daemon.stop() }
        let sock = e.dir + "/state/control.sock"
        #expect(waitForDaemon(stateDir: e.dir + "/state", daemon), "\(daemon.log)")
        let attrs = try FileManager.default.attributesOfItem(atPath: sock)
        #expect((attrs[.posixPermissions] as? NSNumber)?.intValue == 0o600)

        let bg = try e.run(["presence", "background", "--config", e.config])
        #expect(bg.code == 0, "\(bg.stderr)")
        #expect(bg.stdout.hasPrefix("background"))
        let st = try e.run(["status", "--json", "--config", e.config])
        let sv = try #require(JSONValue.parse(st.stdout))
        #expect(sv["daemon"]?["running"] == true)
        #expect(sv["daemon"]?["presence"] == "background")
        #expect(sv["daemon"]?["pid"]?.intValue == Int(daemon.pid))

        let inv = try e.run(["invoke", "device.info", "--config", e.config])
        #expect(inv.code == 0)
        #expect(JSONValue.parse(inv.stdout)?["appVersion"]?.stringValue == NodeVersion.version)
        let fg = try e.run(["presence", "foreground", "--json", "--config", e.config])
        #expect(JSONValue.parse(fg.stdout)?["presence"] == "foreground")
        #expect(try e.run(["presence", "auto", "--config", e.config]).code == 0)

        let second = try e.run(["run", "--config", e.config])
        #expect(second.code == 1)
        #expect(second.stderr.contains("already running"))

        #expect(daemon.stop() == 0)
        #expect(!FileManager.default.fileExists(atPath: sock))
        #expect(daemon.log.contains("received SIGTERM; stopping"))
        #expect(daemon.log.contains("INFO  node: stopped"))
    }

    @Test func presenceWithoutDaemonSaysSo() throws {
        let e = CLIEnv(); defer { e.cleanup() }
        let r = try e.run(["presence", "foreground", "--config", e.config])
        #expect(r.code == 1)
        #expect(r.stderr.contains("no running daemon"))
    }

    /// A typo in a bundle's section is a config error like any other, whether or not the
    /// capability is enabled: its keys come from its manifest, read without loading the bundle.
    @Test func typoInABundleSectionIsAConfigError() throws {
        let e = CLIEnv("capabilities: { camera: { devcie: '/dev/video0' }, location: { enabled: false, gpsdd: 'x' } }")
        defer { e.cleanup() }
        let caps = try e.run(["caps", "--config", e.config])
        #expect(caps.code == 1)
        #expect(caps.stderr.contains("capabilities.camera.devcie: unknown key. Did you mean \"device\"?"), "\(caps.stderr)")
        #expect(caps.stderr.contains("capabilities.location.gpsdd"), "\(caps.stderr)")
        let check = try e.run(["config", "check", e.config])
        #expect(check.code == 3, "\(check.stdout)\(check.stderr)")
        #expect(check.stderr.contains("capabilities.camera.devcie") && check.stderr.contains("capabilities.location.gpsdd"), "\(check.stderr)")
        let doctor = try e.run(["doctor", "--config", e.config])
        #expect(doctor.code == 1 && doctor.stdout.contains("capabilities.camera.devcie"), "\(doctor.stdout)")
    }

    @Test func versionNamesProtocolAndBundles() throws {
        let r = try runProcess(TestPaths.nodeBinary, ["--version"])
        #expect(r.code == 0)
        #expect(r.stdout.hasPrefix("openclaw-node \(NodeVersion.version) (build \(NodeVersion.build), commit "), "\(r.stdout)")
        // scripts/build wrote the commit beside the binary.
        #expect(!r.stdout.contains("commit unknown"), "\(r.stdout)")
        #expect(r.stdout.contains("gateway protocol \(GatewayProtocol.minProtocol)–\(GatewayProtocol.maxProtocol)"))
        for name in ["camera", "canvas", "computer", "location", "screen", "system", "talk"] {
            #expect(r.stdout.contains("\(name) ("), "\(name) not listed: \(r.stdout)")
        }
        // The libraries the bundles share are not bundles.
        for lib in ["node-core", "node-kit", "media (", "video (", "x11 ("] { #expect(!r.stdout.contains(lib), "\(r.stdout)") }
    }

    /// Hostile configs found from outside: an integer past 2^63 and a byte that is not UTF-8 are
    /// config errors with a position, never a crash.
    @Test func hugeIntegerAndInvalidUTF8AreConfigErrors() throws {
        let e = CLIEnv("capabilities: { location: { enabled: true, significantChangeMeters: 1e19, significantChangeMinIntervalMs: 1e19 } }")
        defer { e.cleanup() }
        let check = try e.run(["config", "check", e.config])
        #expect(check.code == 3, "\(check.stdout)\(check.stderr)")
        #expect(check.stderr.contains("capabilities.location.significantChangeMeters: must be between 0 and 1000000, found 1e+19"), "\(check.stderr)")
        let run = try e.run(["run", "--config", e.config])
        #expect(run.code == 1 && run.stderr.contains("significantChangeMinIntervalMs"), "\(run.code) \(run.stderr)")
        #expect(!run.stderr.contains("Fatal error") && !run.stderr.contains("crashed"), "\(run.stderr)")
        let status = try e.run(["status", "--config", e.config])
        #expect(status.code == 1 && status.stderr.contains("config check"), "\(status.stderr)")

        var bytes = Array("{\n  node: { displayName: 'K".utf8)
        bytes += [0xFF]
        bytes += Array("' },\n}\n".utf8)
        try Data(bytes).write(to: URL(fileURLWithPath: e.config))
        let bad = try e.run(["config", "check", e.config])
        #expect(bad.code == 2, "\(bad.stdout)\(bad.stderr)")
        #expect(bad.stderr.contains("\(e.config):2:26: invalid UTF-8 (byte 0xFF)"), "\(bad.stderr)")
    }
}
