@testable import Config
import Foundation
@testable import HostPresence
@testable import Kit
@testable import NodeCLI
@testable import Plugins
@testable import Registry
@testable import Store
@testable import Support
@testable import TestSupport
import Testing

/// The plugin host with the shipped sensors plugin and purpose-built bad plugins.
@Suite(.serialized) struct PluginTests {
    static let testPlugins = TestPaths.repoRoot + "/Tests/plugins"

    func dispatcher(_ names: [String]) async throws -> (Dispatcher, [PluginCapability]) {
        let caps = try names.map { PluginCapability(manifest: try PluginManifest.load(directory: Self.testPlugins + "/" + $0), config: [:]) }
        let registry = await CommandRegistry.load(caps, enabled: { _ in true }, start: true)  // as the daemon does
        let presence = PresenceMonitor(mode: .always, source: FixedPresenceSource(.foreground, reason: "test"))
        return (Dispatcher(registry: registry, presence: presence), caps)
    }

    @Test func sensorsPluginThroughTheRealBinary() throws {
        let root = TestPaths.tempDir("hwmon")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let hw = root + "/sys/class/hwmon/hwmon0"
        try FileManager.default.createDirectory(atPath: hw, withIntermediateDirectories: true)
        for (f, v) in [("name", "coretemp"), ("temp1_input", "48500"), ("temp1_label", "Package id 0"), ("fan1_input", "1200")] {
            _ = FileManager.default.createFile(atPath: hw + "/" + f, contents: Data((v + "\n").utf8))
        }
        let e = CLIEnv("plugins: { dirs: ['\(TestPaths.repoRoot)/Plugins'], entries: { sensors: { enabled: true, config: { root: '\(root)' } } } }")
        defer { e.cleanup() }
        let caps = try e.run(["caps", "--json", "--config", e.config])
        #expect(JSONValue.parse(caps.stdout)?["commands"]?.arrayValue?.contains("sensors.read") == true, "\(caps.stdout)\(caps.stderr)")
        let r = try e.run(["invoke", "sensors.read", "--config", e.config])
        #expect(r.code == 0, "\(r.stdout)\(r.stderr)")
        let list = JSONValue.parse(r.stdout)?["sensors"]?.arrayValue ?? []
        #expect(list.contains { $0["label"] == "Package id 0" && $0["value"] == 48.5 && $0["unit"] == "°C" })
        #expect(list.contains { $0["kind"] == "fan" && $0["value"] == 1200 })
    }

    @Test func notEnabledPluginIsNotLoaded() throws {
        let e = CLIEnv("plugins: { dirs: ['\(TestPaths.repoRoot)/Plugins'] }")
        defer { e.cleanup() }
        let r = try e.run(["invoke", "sensors.read", "--config", e.config])
        #expect(r.code == 1)
        #expect(JSONValue.parse(r.stdout)?["code"] == "INVALID_REQUEST")
    }

    @Test func wellBehavedAndNoisyPluginsAnswer() async throws {
        let (d, caps) = try await dispatcher(["ok", "garbage", "hugeline", "slowstart"])
        defer { Task { for c in caps { await c.shutdown() } } }
        for name in ["ok", "garbage", "hugeline", "slowstart"] {
            let r = await d.invoke(id: "i-\(name)", command: "behave\(name).echo", params: Data(#"{"x":1}"#.utf8), timeoutMs: 20_000)
            #expect((try? r.get())?["params"] == ["x": 1], "\(name): \(r)")
        }
        for c in caps { await c.shutdown() }
    }

    @Test func hangingPluginTimesOutWithoutBlockingOthers() async throws {
        let (d, caps) = try await dispatcher(["hang", "ok"])
        async let hung = d.invoke(id: "h1", command: "behavehang.echo", params: nil, timeoutMs: 500)
        let ok = await d.invoke(id: "o1", command: "behaveok.echo", params: nil, timeoutMs: 5000)
        #expect((try? ok.get()) != nil)
        guard case .failure(let e) = await hung else { Issue.record("expected timeout"); return }
        #expect(e.code == "TIMEOUT")
        for c in caps { await c.shutdown() }
    }

    @Test func crashingPluginIsRestartedThenGivenUp() async throws {
        let (d, caps) = try await dispatcher(["crash"])
        var codes: [String] = []
        for i in 0..<8 {
            let r = await d.invoke(id: "c\(i)", command: "behavecrash.echo", params: nil, timeoutMs: 15_000)
            if case .failure(let e) = r { codes.append(e.code.rawValue) }
        }
        #expect(codes.first == "PLUGIN_CRASHED")
        #expect(codes.last == "PLUGIN_UNAVAILABLE", "\(codes)")
        let status = await caps[0].process.status
        #expect(status.contains("crashed 5 times"), "\(status)")
        for c in caps { await c.shutdown() }
    }

    /// A plugin is checked again before every restart: one whose files changed after the node read
    /// them (a manifest rewritten, a directory link repointed) is not restarted, and says why.
    @Test func aPluginThatChangedIsNotRestarted() async throws {
        let dir = TestPaths.tempDir("plugin-copy")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        chmod(dir, 0o755)
        let manifest = try String(contentsOfFile: Self.testPlugins + "/crash/plugin.json5", encoding: .utf8)
            .replacingOccurrences(of: "../behave/behave.py", with: Self.testPlugins + "/behave/behave.py")
        try manifest.write(toFile: dir + "/plugin.json5", atomically: true, encoding: .utf8)
        chmod(dir + "/plugin.json5", 0o644)
        let cap = PluginCapability(manifest: try PluginManifest.load(directory: dir), config: [:])
        let registry = await CommandRegistry.load([cap], enabled: { _ in true }, start: true)
        let d = Dispatcher(registry: registry, presence: PresenceMonitor(mode: .always, source: FixedPresenceSource(.foreground, reason: "test")))
        let first = await d.invoke(id: "c0", command: "behavecrash.echo", params: nil, timeoutMs: 15_000)
        guard case .failure(let e) = first else { Issue.record("no crash: \(first)"); return }
        #expect(e.code.rawValue == "PLUGIN_CRASHED")
        try manifest.replacingOccurrences(of: "test plugin (crash)", with: "something else now")
            .write(toFile: dir + "/plugin.json5", atomically: true, encoding: .utf8)
        chmod(dir + "/plugin.json5", 0o644)
        // The restart after the crash meets the change.
        var status = ""
        for _ in 0..<300 {  // up to 30 s: the restart's backoff, then the plugin's start
            status = await cap.process.status
            if status.contains("is not restarted") { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(status.contains("is not restarted") && status.contains("changed since the node started"), "\(status)")
        await cap.shutdown()
    }

    @Test func pluginWithoutHelloIsNotAdvertised() async throws {
        let (d, caps) = try await dispatcher(["nohello"])
        #expect(d.registry.manifest.commands.isEmpty)
        #expect(d.registry.notAdvertisedReasons.first?.contains("did not say hello") == true)
        for c in caps { await c.shutdown() }
    }

    @Test func pluginEventsAreForwarded() async throws {
        let (d, caps) = try await dispatcher(["event"])
        let stream = try #require(await caps[0].events())
        _ = await d.invoke(id: "e1", command: "behaveevent.echo", params: nil, timeoutMs: 5000)
        var it = stream.makeAsyncIterator()
        #expect(await it.next() == CapabilityEvent(.custom("behave.happened"), payload: ["n": 1]))
        for c in caps { await c.shutdown() }
    }

    @Test func manifestErrorsAreClear() throws {
        let dir = TestPaths.tempDir("pm")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        _ = FileManager.default.createFile(atPath: dir + "/plugin.json5", contents: Data("{ id: 'x', executable: 'a', commands: [ { name: 'nodot' } ] }".utf8))
        #expect(throws: PluginManifest.Invalid.self) { try PluginManifest.load(directory: dir) }
        _ = FileManager.default.createFile(atPath: dir + "/plugin.json5", contents: Data("{ id: 'x y', executable: 'a', commands: [ { name: 'a.b' } ] }".utf8))
        #expect(throws: PluginManifest.Invalid.self) { try PluginManifest.load(directory: dir) }
    }
}

/// Two plugins that claim the same command or capability: the first keeps serving, the second is
/// refused at load time with a log line naming both, and nothing crashes.
@Suite struct PluginCollisionTests {
    static func writePlugin(_ root: String, dir: String, id: String, capability: String, command: String, mode: String) {
        try? FileManager.default.createDirectory(atPath: root + "/" + dir, withIntermediateDirectories: true)
        let text = """
            { id: "\(id)", executable: "\(PluginTests.testPlugins)/behave/behave.py", args: ["\(mode)"],
              capability: "\(capability)", commands: [ { name: "\(command)", summary: "collision test" } ] }
            """
        _ = FileManager.default.createFile(atPath: root + "/" + dir + "/plugin.json5", contents: Data(text.utf8))
    }

    @Test func sameCommandInTwoPluginsFirstServes() throws {
        let root = TestPaths.tempDir("plugclash")
        defer { try? FileManager.default.removeItem(atPath: root) }
        Self.writePlugin(root, dir: "a-first", id: "first", capability: "alpha", command: "shared.echo", mode: "ok")
        Self.writePlugin(root, dir: "b-second", id: "second", capability: "beta", command: "shared.echo", mode: "event")
        Self.writePlugin(root, dir: "c-third", id: "third", capability: "alpha", command: "gamma.echo", mode: "event")
        let e = CLIEnv("plugins: { dirs: ['\(root)'], entries: { first: { enabled: true }, second: { enabled: true }, third: { enabled: true } } }")
        defer { e.cleanup() }
        let r = try e.run(["invoke", "shared.echo", "--local", "--config", e.config])
        #expect(r.code == 0, "\(r.stdout)\(r.stderr)")
        #expect(JSONValue.parse(r.stdout)?["mode"] == "ok", "the first plugin answers: \(r.stdout)")
        #expect(r.stderr.contains("refused capability beta (plugin second in \(root)/b-second): command shared.echo is already declared by capability alpha"), "\(r.stderr)")
        #expect(r.stderr.contains("refused capability alpha (plugin third in \(root)/c-third): a capability named alpha is already loaded (plugin first in \(root)/a-first)"), "\(r.stderr)")

        let caps = try e.run(["caps", "--json", "--config", e.config])
        let doc = try #require(JSONValue.parse(caps.stdout), "\(caps.stderr)")
        #expect(doc["caps"]?.arrayValue?.contains("alpha") == true)
        #expect(doc["caps"]?.arrayValue?.contains("beta") == false)
        #expect(doc["notAdvertised"]?.arrayValue?.contains { $0.stringValue?.hasPrefix("beta: refused: command shared.echo") == true } == true, "\(caps.stdout)")
        #expect(doc["commands"]?.arrayValue?.contains("gamma.echo") == false)
    }

    @Test func pluginCannotTakeOverABuiltInCommand() throws {
        let root = TestPaths.tempDir("plugclash")
        defer { try? FileManager.default.removeItem(atPath: root) }
        Self.writePlugin(root, dir: "fake-device", id: "fakedev", capability: "fakedev", command: "device.info", mode: "ok")
        let e = CLIEnv("plugins: { dirs: ['\(root)'], entries: { fakedev: { enabled: true } } }")
        defer { e.cleanup() }
        let r = try e.run(["invoke", "device.info", "--local", "--config", e.config])
        #expect(r.code == 0)
        #expect(JSONValue.parse(r.stdout)?["deviceName"] != nil, "the built-in device.info answers: \(r.stdout)")
        #expect(r.stderr.contains("refused capability fakedev") && r.stderr.contains("device keeps serving it"), "\(r.stderr)")
    }
}
