@testable import Config
import Foundation
@testable import Kit
@testable import Support
import Testing

@Suite struct ConfigTests {
    func invalid(_ text: String) -> [ConfigError] {
        do { _ = try ConfigLoader.parse(text, file: "c.json5"); return [] }
        catch { if case .invalid(let errs) = error { return errs }; return [] }
    }

    @Test func repoConfigLoadsCleanly() throws {
        let path = TestPaths.repoRoot + "/config.json5"
        let c = try ConfigLoader.load(path: path, environment: ["HOME": "/home/u"])
        #expect(c.gateway.url == "ws://127.0.0.1:18789")
        #expect(c.gateway.allowTOFU)
        #expect(c.presence.mode == .auto)
        #expect(c.isEnabled("camera"))
        #expect(!c.isEnabled("location"))
        #expect(c.capability("location").string("gpsd") == "127.0.0.1:2947")
        #expect(c.stateDir == "/home/u/.local/state/openclaw-node")
    }

    @Test func repoConfigDocumentsEveryKey() throws {
        let text = try String(contentsOfFile: TestPaths.repoRoot + "/config.json5", encoding: .utf8)
        // The core's keys, and each installed bundle's own (from its manifest, as the node reads them).
        let catalog = BundleCatalog.current
        #expect(catalog.bundles.count >= 7, "\(catalog.names) \(catalog.refused)")
        for m in catalog.bundles { #expect(!m.config.isEmpty, "\(m.name) declares no keys") }
        for path in ConfigSchema.allKeyPaths(bundles: catalog.manifests) {
            let leaf = String(path.split(separator: ".").last!)
            #expect(text.contains("\(leaf):"), "config.json5 does not document \(path)")
        }
    }

    @Test func emptyObjectIsValidWithDefaults() throws {
        let c = try ConfigLoader.parse("{}", file: "c.json5", environment: ["HOME": "/h"])
        #expect(c.gateway.url == nil)
        #expect(c.displayName.hasPrefix("Linux Node ("))
        #expect(c.isEnabled("device") && c.isEnabled("canvas"))
    }

    @Test func unknownKeyNamesPathLocationAndSuggestion() {
        let errs = invalid("{\n  gateway: {\n    urll: 'ws://x',\n  },\n}")
        #expect(errs.count == 1)
        let e = errs[0]
        #expect(e.keyPath == "gateway.urll")
        #expect(e.location == SourceLocation(line: 3, column: 5))
        #expect(e.description.hasPrefix("c.json5:3:5: gateway.urll: unknown key. Did you mean \"url\"?"))
    }

    @Test func unknownKeyWithoutCloseMatchListsKnownKeys() {
        let errs = invalid("{ zzzzzz: 1 }")
        #expect(errs.first?.reason.contains("Known keys here: gateway, node, presence, capabilities, plugins") == true)
    }

    @Test func wrongTypeNamesPath() {
        let errs = invalid("{ capabilities: { camera: { enabled: 'yes' } } }")
        #expect(errs.count == 1)
        #expect(errs[0].keyPath == "capabilities.camera.enabled")
        #expect(errs[0].reason == "expected a boolean (true or false), found a string")
    }

    @Test func enumValueSuggests() {
        let errs = invalid("{ presence: { mode: 'x12' } }")
        #expect(errs.first?.reason.contains("Did you mean \"x11\"?") == true)
    }

    @Test func everyProblemIsReported() {
        let errs = invalid("{ gateway: { url: 1, tokn: 'a' }, node: [], plugins: { dirs: ['a', 2] } }")
        #expect(Set(errs.map(\.keyPath)) == ["gateway.url", "gateway.tokn", "node", "plugins.dirs[1]"])
    }

    @Test func topLevelMustBeObject() {
        let errs = invalid("[1, 2]")
        #expect(errs.first?.reason.contains("must be an object") == true)
    }

    @Test func pluginEntriesAreFreeKeysWithFixedShape() throws {
        let c = try ConfigLoader.parse("{ plugins: { entries: { 'my-plugin': { enabled: false, config: { any: [1] } } } } }", file: "c")
        #expect(c.pluginEntries["my-plugin"]?.enabled == false)
        #expect(c.pluginEntries["my-plugin"]?.config == ["any": [1]])
        #expect(invalid("{ plugins: { entries: { p: { enabeld: true } } } }").first?.keyPath == "plugins.entries.p.enabeld")
    }

    @Test func syntaxErrorCarriesLocation() {
        do { _ = try ConfigLoader.parse("{\n  a: 1,,\n}", file: "c.json5"); Issue.record("expected error") }
        catch {
            guard case .syntax(let e) = error else { Issue.record("expected syntax error, got \(error)"); return }
            #expect(e.location.line == 2)
            #expect(error.description.hasPrefix("c.json5:2:"))
        }
    }

    @Test func environmentOverridesFile() throws {
        let env = ["OPENCLAW_GATEWAY_URL": "wss://gw.example:443", "OPENCLAW_GATEWAY_TOKEN": "secret", "HOME": "/h"]
        let c = try ConfigLoader.parse("{ gateway: { url: 'ws://127.0.0.1:1', token: 'file' } }", file: "c", environment: env)
        #expect(c.gateway.url == "wss://gw.example:443")
        #expect(c.gateway.token == "secret")
        let d = try ConfigLoader.load(path: nil, environment: env)
        #expect(d.gateway.url == "wss://gw.example:443")
    }

    @Test func stateDirExpandsHome() throws {
        let c = try ConfigLoader.parse("{ node: { stateDir: '~/x/y' } }", file: "c", environment: ["HOME": "/home/k"])
        #expect(c.stateDir == "/home/k/x/y")
    }

    @Test func defaultConfigLocation() throws {
        let dir = TestPaths.tempDir("cfg")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(ConfigLoader.resolvePath(explicit: nil, environment: ["XDG_CONFIG_HOME": dir]) == nil)
        try FileManager.default.createDirectory(atPath: dir + "/openclaw-node", withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: dir + "/openclaw-node/config.json5", contents: Data("{}".utf8))
        #expect(ConfigLoader.resolvePath(explicit: nil, environment: ["XDG_CONFIG_HOME": dir]) == dir + "/openclaw-node/config.json5")
        #expect(ConfigLoader.resolvePath(explicit: "/x.json5", environment: [:]) == "/x.json5")
        // The system file comes after the user's, and only when it exists.
        let system = dir + "/etc-config.json5"
        #expect(ConfigLoader.resolvePath(explicit: nil, environment: ["XDG_CONFIG_HOME": dir + "/none"], systemFile: system) == nil)
        _ = FileManager.default.createFile(atPath: system, contents: Data("{}".utf8))
        #expect(ConfigLoader.resolvePath(explicit: nil, environment: ["XDG_CONFIG_HOME": dir + "/none"], systemFile: system) == system)
        #expect(ConfigLoader.resolvePath(explicit: nil, environment: ["XDG_CONFIG_HOME": dir], systemFile: system) == dir + "/openclaw-node/config.json5")
    }

    /// A capability's own keys are its manifest's: checked with the rest of the file (no bundle is
    /// loaded for it), with the same file:line:col and "did you mean" as the core's keys.
    @Test func bundleSectionKeysAreCheckedFromTheManifests() throws {
        let errors = invalid("{\n  capabilities: {\n    camera: { devcie: '/dev/video0' },\n    canvas: { window: 'yes' },\n  },\n}")
        #expect(errors.first?.description == "c.json5:3:15: capabilities.camera.devcie: unknown key. Did you mean \"device\"?")
        let canvas = errors.first { $0.keyPath == "capabilities.canvas.window" }
        #expect(canvas?.reason == "expected a boolean (true or false), found a string")
        // A section no installed bundle has is a mistake too.
        #expect(invalid("{ capabilities: { camra: {} } }").first?.reason.contains("Did you mean \"camera\"") == true)
        // `enabled` is the core's, checked with the rest of the file.
        #expect(invalid("{ capabilities: { camera: { enabled: 'yes' } } }").first?.keyPath == "capabilities.camera.enabled")
    }
}
