@testable import Config
import Foundation
@testable import HostPresence
@testable import Kit
@testable import NodeCLI
@testable import Registry
@testable import Store
@testable import Support
@testable import TestSupport
import Testing

@Suite(.serialized) struct DoctorTests {
    @Test func missingPrerequisitesAreClearFindings() throws {
        let port = try freeLoopbackPort()
        let e = CLIEnv("gateway: { url: 'ws://127.0.0.1:\(port)' }, capabilities: { location: { enabled: true, gpsd: '127.0.0.1:\(port)' }, screen: { display: ':977' } }")
        defer { e.cleanup() }
        let r = try e.run(["doctor", "--json", "--config", e.config])
        #expect(r.code == 1)
        let v = try #require(JSONValue.parse(r.stdout), "\(r.stdout)\(r.stderr)")
        let fails = (v["findings"]?.arrayValue ?? []).filter { $0["level"] == "FAIL" }.compactMap { $0["text"]?.stringValue }
        #expect(fails.contains { $0.contains("gpsd is not reachable at 127.0.0.1:\(port)") }, "\(fails)")
        #expect(fails.contains { $0.contains("127.0.0.1:\(port) is not reachable") }, "\(fails)")
        // A capability whose hardware is absent is a warning with what to do, not a failure.
        let warns = (v["findings"]?.arrayValue ?? []).filter { $0["level"] == "warn" }.compactMap { $0["text"]?.stringValue }
        #expect(warns.contains { $0.contains("enabled but not usable") && $0.contains(":977") && $0.contains("capabilities.screen.enabled: false") }, "\(warns)")
        #expect(!fails.contains { $0.contains(":977") }, "\(fails)")
    }

    /// No gateway.url means discovery, which doctor says (not "local only"); a kiosk canvas
    /// without a display is a failure with the key to set.
    @Test func discoveryAndKioskFindings() throws {
        let e = CLIEnv("gateway: { name: 'office', discovery: { wideAreaDomain: 'openclaw.internal.' } }, capabilities: { canvas: { window: true } }")
        defer { e.cleanup() }
        var vars = e.vars
        vars["DISPLAY"] = nil
        let r = try runProcess(TestPaths.nodeBinary, ["doctor", "--json", "--config", e.config], env: vars)
        let v = try #require(JSONValue.parse(r.stdout), "\(r.stdout)\(r.stderr)")
        let texts = (v["findings"]?.arrayValue ?? []).compactMap { f in f["text"]?.stringValue.map { "\(f["level"]?.stringValue ?? "") \($0)" } }
        #expect(texts.contains { $0.hasPrefix("ok") && $0.contains("LAN (avahi) and wide-area DNS-SD in openclaw.internal. named \"office\"") }, "\(texts)")
        if CanvasNode.windowBrowserInstalled {
            #expect(texts.contains { $0.hasPrefix("FAIL") && $0.contains("window: true but no X display") }, "\(texts)")
        }
    }

    @Test func healthyConfigAndAllowlistSnippet() throws {
        let gw = try TestGateway(stateFile: TestPaths.tempDir("gw") + "/gw.json", args: ["--auto-approve"])
        defer { gw.stop() }
        let e = CLIEnv("gateway: { url: '\(gw.url)' }, capabilities: { screen: { enabled: false }, camera: { enabled: false }, canvas: { enabled: false } }")
        defer { e.cleanup() }
        _ = try e.run(["status", "--config", e.config])  // creates the state database
        let r = try e.run(["doctor", "--config", e.config])
        #expect(r.code == 0, "\(r.stdout)\(r.stderr)")
        #expect(r.stdout.contains("All checks passed."))
        let j = try #require(JSONValue.parse(try e.run(["doctor", "--json", "--config", e.config]).stdout))
        #expect(j["allowCommands"] == ["device.info", "device.status"])
        #expect(j["gatewayPolicy"]?["device.info"] == "allowlist")
        // The snippet is valid JSON5 and lists exactly the filtered commands, under both key names.
        let snippet = try #require(j["allowlistSnippet"]?.stringValue)
        let docs = snippet.split(separator: "\n").filter { !$0.hasPrefix("//") }
        #expect(docs.count == 2)
        let new = try JSON5Parser.parse(String(docs[0])).plain
        let old = try JSON5Parser.parse(String(docs[1])).plain
        // Older gateways allowlist what they do not know: the MCP bundle's call (on by default).
        #expect(old["gateway"]?["nodes"]?["allowCommands"] == ["device.info", "device.status", "mcp.tools.call.v1"])
        #expect(new["gateway"]?["nodes"]?["commands"]?["allow"] == ["device.info", "device.status"])
    }

    /// Per command, what the newest gateway's Linux policy does (docs/PROTOCOL.md §5): the snippet
    /// holds only what needs an allow entry, and the text says how to get the rest approved.
    @Test func doctorSpeaksTheGatewayPolicy() throws {
        let e = CLIEnv("""
            capabilities: { screen: { enabled: false }, camera: { enabled: false }, canvas: { enabled: false },
                            system: { enabled: true } },
            plugins: { dirs: ['\(TestPaths.repoRoot)/Plugins'], entries: { 'system-notify': { enabled: true }, sensors: { enabled: true } } }
            """)
        defer { e.cleanup() }
        let j = try #require(JSONValue.parse(try e.run(["doctor", "--json", "--config", e.config]).stdout))
        let p = try #require(j["gatewayPolicy"])
        #expect(p["system.notify"] == "allowedByDefault")
        #expect(p["system.run"] == "afterSurfaceApproval" && p["system.execApprovals.set"] == "afterSurfaceApproval")
        #expect(p["sensors.read"] == "allowlist" && p["device.status"] == "allowlist")
        #expect(j["allowCommands"] == ["device.info", "device.status", "sensors.read"], "\(j)")
        #expect(j["allowCommandsOlderGateways"]?.arrayValue?.contains("system.run") == true)
        let text = try e.run(["doctor", "--config", e.config]).stdout
        #expect(text.contains("allowed once an operator approves this node's command surface"), "\(text)")
        #expect(text.contains("openclaw nodes approve"), "\(text)")
    }

    @Test func dangerousAndCanvasCommandsAreNamedSo() {
        // The real rows, from the installed manifests.
        let rows = ["camera", "canvas", "talk", "computer"].flatMap { name in
            TestManifests.named(name).commands.map { CommandSpec(row: $0, capability: name, handler: nil) }
        }
        let m = rows.filter { ["camera.snap", "camera.list", "canvas.eval", "talk.ptt.once", "computer.act"].contains($0.name) }
        let c = Dictionary(uniqueKeysWithValues: GatewayAllowlist.classify(m).map { ($0.command, $0.policy) })
        #expect(c["camera.snap"] == .allowlistDangerous)
        #expect(c["camera.list"] == .allowlist)
        // Gateways from 2026.8 route canvas to macOS nodes only: on Linux only an allow entry reaches it.
        #expect(c["canvas.eval"] == .allowlist)
        #expect(c["talk.ptt.once"] == .allowedByDefault)
        #expect(c["computer.act"] == .allowedByDefault)
        // canvas.* too: nothing but an allow entry lets a gateway send it to a Linux node.
        #expect(Set(GatewayAllowlist.needsAllow(m)) == ["camera.list", "camera.snap", "canvas.eval"])
    }

    @Test func looseStatePermissionsFail() throws {
        let e = CLIEnv(); defer { e.cleanup() }
        _ = try e.run(["status", "--config", e.config])
        chmod(e.dir + "/state/state.db", 0o644)
        let r = try e.run(["doctor", "--config", e.config])
        #expect(r.code == 1)
        #expect(r.stdout.contains("chmod 600"))
    }
}

@Suite struct ServiceInstallTests {
    @Test(arguments: [false, true])
    func installWritesAVerifiableUnit(system: Bool) throws {
        let e = CLIEnv(); defer { e.cleanup() }
        let unitDir = e.dir + "/units"
        let r = try e.run(["service", "install", system ? "--system" : "--user", "--unit-dir", unitDir, "--config", e.config])
        #expect(r.code == 0, "\(r.stderr)")
        let unit = try String(contentsOfFile: unitDir + "/openclaw-node.service", encoding: .utf8)
        #expect(unit.contains("ExecStart=\(TestPaths.nodeBinary) run --config \(e.config)"))
        #expect(unit.contains("Restart=on-failure"))
        if system {
            #expect(unit.contains("DeviceAllow=char-video4linux rw"))
            #expect(unit.contains("ReadWritePaths=\(e.dir)/state"))
        }
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze") {
            let v = try runProcess("/usr/bin/systemd-analyze", ["verify", unitDir + "/openclaw-node.service"])
            // verify prints nothing about our unit when it is fine (it may warn about the host).
            #expect(!v.stderr.contains("openclaw-node.service:"), "\(v.stderr)")
        }
        let u = try e.run(["service", "uninstall", "--unit-dir", unitDir])
        #expect(u.code == 0)
        #expect(!FileManager.default.fileExists(atPath: unitDir + "/openclaw-node.service"))
    }
}

@Suite struct PackagedUnitTests {
    /// The package's units come from the same generator as `service install`; the system one runs
    /// as the dedicated account with systemd managing its state directory.
    @Test func packagedUnitsAreHardenedAndVerify() throws {
        let e = CLIEnv(); defer { e.cleanup() }
        let system = try runProcess(TestPaths.nodeBinary, ["service", "unit", "--packaged"])
        #expect(system.code == 0, "\(system.stderr)")
        for line in ["ExecStart=/usr/bin/openclaw-node run --config /etc/openclaw-node/config.json5", "Type=notify",
                     "WatchdogSec=30", "ExecReload=/bin/kill -HUP $MAINPID", "User=openclaw-node",
                     "SupplementaryGroups=video audio input", "StateDirectory=openclaw-node", "StateDirectoryMode=0700",
                     "ProtectSystem=strict", "ProtectHome=yes", "PrivateTmp=yes", "NoNewPrivileges=yes",
                     "DeviceAllow=char-video4linux rw", "DeviceAllow=char-fb rw", "DeviceAllow=char-alsa rw",
                     "DeviceAllow=char-input r", "Documentation=man:openclaw-node(1)"] {
            #expect(system.stdout.split(separator: "\n").contains(Substring(line)), "missing \(line)")
        }
        let user = try runProcess(TestPaths.nodeBinary, ["service", "unit", "--packaged", "--user"])
        #expect(user.stdout.contains("ExecStart=/usr/bin/openclaw-node run\n") && !user.stdout.contains("User="), "\(user.stdout)")
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze") {
            // Verified as installed, with this build standing in for /usr/bin/openclaw-node.
            for (name, text) in [("system", system.stdout), ("user", user.stdout)] {
                let path = e.dir + "/\(name)/openclaw-node.service"
                try FileManager.default.createDirectory(atPath: e.dir + "/\(name)", withIntermediateDirectories: true)
                try text.replacingOccurrences(of: "/usr/bin/openclaw-node", with: TestPaths.nodeBinary)
                    .write(toFile: path, atomically: true, encoding: .utf8)
                let v = try runProcess("/usr/bin/systemd-analyze", ["verify", "--man=no", path])
                #expect(!v.stderr.contains("openclaw-node.service:"), "\(name): \(v.stderr)")
            }
        }
    }
}
