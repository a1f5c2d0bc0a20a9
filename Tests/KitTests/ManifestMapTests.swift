@testable import Config
@testable import Kit
@testable import Support
import Testing

/// Manifests may declare maps of objects and objects that must have exactly one of some keys (an
/// MCP server: `command` or `url`); a config is checked against them with file:line:col, and the
/// entries of such a map get their keys' defaults.
@Suite struct ManifestMapTests {
    static let manifest = """
        { name: "demo", summary: "s", enabledByDefault: true,
          config: {
            servers: { type: "map", default: {}, doc: "d", of: { type: "object", oneOf: ["command", "url"], fields: {
              command: { type: "string", doc: "d" },
              url: { type: "string", doc: "d" },
              timeoutMs: { type: "integer", min: 1, max: 10, default: 5, doc: "d" },
              filter: { type: "object", doc: "d", fields: { include: { type: "stringArray", doc: "d" } } },
              env: { type: "map", of: { type: "string" }, doc: "d" },
            } } },
          },
          commands: { "demo.run": { summary: "s" } } }
        """

    static func check(_ servers: String) throws -> [ConfigError] {
        let m = try BundleManifestReader.read(manifest, file: "demo.manifest.json5", expectedName: "demo", library: nil)
        let doc = "{\n  capabilities: { demo: { servers: \(servers) } },\n}"
        return ConfigValidator.validate(try JSON5Parser.parse(doc), file: "c.json5", bundles: [m])
    }

    @Test func exactlyOneOfIsEnforcedWithALocation() throws {
        #expect(try Self.check("{ a: { command: 'x' }, b: { url: 'http://127.0.0.1/' } }").isEmpty)
        let both = try Self.check("{ a: { command: 'x', url: 'y' } }")
        #expect(both.map(\.description) == ["c.json5:2:41: capabilities.demo.servers.a: has command and url; it may have only one of them"], "\(both)")
        let neither = try Self.check("{ a: { timeoutMs: 3 } }")
        #expect(neither.first?.reason == "needs one of command or url", "\(neither)")
        // Nested values are checked as deep as they go.
        let deep = try Self.check("{ a: { command: 'x', env: { K: 1 }, filter: { include: [2] }, timeoutMs: 11 } }")
        #expect(Set(deep.map(\.keyPath)) == ["capabilities.demo.servers.a.env.K", "capabilities.demo.servers.a.filter.include[0]",
                                             "capabilities.demo.servers.a.timeoutMs"], "\(deep)")
    }

    @Test func mapEntriesGetTheirDefaults() throws {
        let m = try BundleManifestReader.read(Self.manifest, file: "demo.manifest.json5", expectedName: "demo", library: nil)
        let s = BundleSection.filling(["servers": ["a": ["command": "x"]]], enabled: true, from: m.config)
        #expect(s.settings["servers"]?["a"]?["timeoutMs"] == 5)
        #expect(BundleSection.filling([:], enabled: true, from: m.config).settings["servers"] == [:])
    }

    @Test func manifestsRefuseWhatMakesNoSense() {
        func problem(_ config: String) -> String {
            let text = "{ name: \"demo\", summary: \"s\", enabledByDefault: true, config: { \(config) }, commands: { \"demo.run\": { summary: \"s\" } } }"
            do { _ = try BundleManifestReader.read(text, file: "m", expectedName: "demo", library: nil); return "" }
            catch { return "\(error)" }
        }
        #expect(problem("k: { type: \"map\", doc: \"d\" }").contains("a map needs \"of\""))
        #expect(problem("k: { type: \"object\", doc: \"d\", oneOf: [\"x\"], fields: { y: { type: \"string\", doc: \"d\" } } }").contains("\"x\" is not one of the object's fields"))
        let deep = "k: { type: \"map\", doc: \"d\", of: { type: \"map\", of: { type: \"map\", of: { type: \"map\", of: { type: \"string\" } } } } }"
        #expect(problem(deep).contains("nest 3 levels deep at most"))
    }
}
