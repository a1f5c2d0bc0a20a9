@testable import Config
import Foundation
@testable import Support
import Testing

/// The manifest reader on its own: what a good manifest becomes, and each way a bad one is told.
struct BundleManifestReaderTests {
    static let good = """
        {
          name: "demo",
          summary: "a demo",
          enabledByDefault: true,
          packages: { depends: ["libdemo1"], recommends: ["demo-data"] },
          config: {
            level: { type: "integer", min: 0, max: 9, default: 3, doc: "how much" },
            mode: { type: "enum", values: ["a", "b"], default: "a", doc: "which" },
            display: { type: "string", defaultDoc: "$DISPLAY", doc: "where" },
            voice: { type: "object", doc: "voice", fields: { enabled: { type: "bool", default: false, doc: "on" } } },
            secret: { type: "string", reload: "restart-node", doc: "needs a restart" },
          },
          commands: {
            "demo.one": { summary: "first", foreground: true, permission: "demo", gateway: "surface-approval", params: { x: { type: "integer", min: 0, max: 9, default: 1, doc: "how many" }, y: { type: "string", required: true, doc: "a name" } } },
            "demo.two": { summary: "second", dangerous: true },
          },
          doctor: { ok: "everything" },
          cli: { demo: { summary: "s", help: "h" } },
        }
        """

    func read(_ text: String, name: String? = "demo") throws(BundleManifestReader.Invalid) -> BundleManifest {
        try BundleManifestReader.read(text, file: "m.json5", expectedName: name, library: "libopenclaw-demo.so")
    }

    func problems(_ text: String) -> [String] {
        do { _ = try read(text); return [] } catch { return error.problems }
    }

    @Test func aGoodManifestReadsInOrder() throws {
        let m = try read(Self.good)
        #expect(m.name == "demo" && m.enabledByDefault && m.library == "libopenclaw-demo.so")
        #expect(m.config.map(\.key) == ["level", "mode", "display", "voice", "secret"])
        #expect(m.commands.map(\.name) == ["demo.one", "demo.two"])
        let one = m.commands[0]
        #expect(one.requiresForeground && !one.dangerous && one.permission == "demo" && one.gateway == .surfaceApproval)
        #expect(one.olderGateway == .allowlist && one.params.count == 2)
        #expect(one.params.map(\.key) == ["x", "y"] && one.params[0].type == .integer(0...9) && one.params[0].defaultValue == 1)
        #expect(one.params[1].required && !one.params[0].required)
        #expect(one.paramsDoc.map(\.1) == ["integer 0..9, default 1: how many", "string, required: a name"])
        #expect(m.commands[1].dangerous && m.commands[1].gateway == .allowlist)
        #expect(m.depends == ["libdemo1"] && m.recommends == ["demo-data"])
        #expect(m.doctor == [BundleManifest.DoctorCheck(id: "ok", doc: "everything")] && m.cli.map(\.name) == ["demo"])
        #expect(m.restartKeys == ["secret"])
        #expect(m.config[0].defaultValue == 3 && m.config[0].defaultText == "3")
        #expect(m.config[2].defaultValue == nil && m.config[2].defaultText == "$DISPLAY")
    }

    @Test func sectionsGetTheDefaultsFilledOneLevelDeep() throws {
        let m = try read(Self.good)
        let s = NodeConfig.CapabilitySection.filling(["mode": "b"], enabled: true, from: m.config)
        #expect(s.settings["level"] == 3 && s.settings["mode"] == "b" && s.settings["display"] == nil)
        #expect(s.settings["voice"] == ["enabled": false])
        let written = NodeConfig.CapabilitySection.filling(["voice": ["enabled": true]], enabled: true, from: m.config)
        #expect(written.settings["voice"] == ["enabled": true])
    }

    @Test func eachMistakeIsNamedWithItsPlace() {
        #expect(problems("{ name: 'demo', summary: 's', commands: { 'demo.x': { summary: 's', foregrond: true } } }")
            == ["m.json5:1:69: commands.demo.x.foregrond: unknown key. Did you mean \"foreground\"?"])
        #expect(problems("{ summary: 's', commands: { 'demo.x': { summary: 's' } } }").first?.contains("missing key \"name\"") == true)
        #expect(problems("{ name: 'Demo!', summary: 's', commands: { 'demo.x': { summary: 's' } } }").first?.contains("is not a bundle name") == true)
        #expect(problems("{ name: 'other', summary: 's', commands: { 'other.x': { summary: 's' } } }").first?
            .contains("the manifest is for \"other\" but its file is named for \"demo\"") == true)
        #expect(problems("{ name: 'demo', summary: 's', commands: {} }").first?.contains("at least one command") == true)
        #expect(problems("{ name: 'demo', summary: 's', commands: { nodot: { summary: 's' } } }").first?.contains("is not a command name") == true)
        #expect(problems("{ name: 'demo', summary: 's', commands: { 'demo.x': {} } }").first?.contains("missing key \"summary\"") == true)
        #expect(problems("{ name: 'demo', summary: 's', config: { n: { type: 'integer', doc: 'n' } }, commands: { 'demo.x': { summary: 's' } } }")
            .first?.contains("an integer key needs \"min\" and \"max\"") == true)
        #expect(problems("{ name: 'demo', summary: 's', config: { n: { type: 'bool', default: 'yes', doc: 'n' } }, commands: { 'demo.x': { summary: 's' } } }")
            .first?.contains("the default does not fit the type") == true)
        #expect(problems("{ name: 'demo', summary: 's', config: { n: { type: 'enum', doc: 'n' } }, commands: { 'demo.x': { summary: 's' } } }")
            .first?.contains("an enum key needs \"values\"") == true)
        #expect(problems("{ name: 'demo', summary: 's', commands: { 'demo.x': { summary: 's', gateway: 'maybe' } } }")
            .first?.contains("\"maybe\" is not one of") == true)
        #expect(problems("{ name: 'demo' ").first?.hasPrefix("m.json5:1:") == true)
    }

    /// `programs`: what the bundle runs, where it comes from, what for; each mistake said.
    @Test func programsReadInOrderAndMistakesAreNamed() throws {
        let m = try read("""
            { name: "demo", summary: "s", commands: { "demo.x": { summary: "s" } },
              programs: { tar: { package: "tar", for: "archives" },
                          "/usr/lib/demo/helper": { from: "the vendor's site", optional: true, for: "the helper" } } }
            """)
        #expect(m.programs == [.init(name: "tar", package: "tar", from: nil, purpose: "archives"),
                               .init(name: "/usr/lib/demo/helper", package: nil, from: "the vendor's site", purpose: "the helper", optional: true)])
        func refused(_ row: String) -> String {
            problems("{ name: 'demo', summary: 's', commands: { 'demo.x': { summary: 's' } }, programs: { \(row) } }").joined(separator: "\n")
        }
        #expect(refused("'bin/tar': { package: 'tar', for: 'x' }").contains("a name looked up on PATH (no slash) or an absolute path"))
        #expect(refused("tar: { for: 'x' }").contains("either package (the Debian package that ships it) or from"))
        #expect(refused("tar: { package: 'tar', from: 'x', for: 'x' }").contains("either package"))
        #expect(refused("tar: { package: 'tar | cpio', for: 'x' }").contains("is not one Debian package name"))
        #expect(refused("tar: { package: 'tar' }").contains("missing key \"for\""))
        #expect(refused("tar: { package: 'tar', for: 'x', optinal: true }").contains("optinal"))
    }

    @Test func theBuiltInManifestIsAnOrdinaryOne() {
        let d = BuiltInManifest.device
        #expect(d.name == "device" && d.library == nil && d.enabledByDefault)
        #expect(d.commands.map(\.name) == ["device.info", "device.status"])
    }

    /// The catalog reads a directory of manifests and refuses, with the reason, one it cannot use.
    @Test func theCatalogReadsADirectoryAndRefusesWhatDoesNotHold() throws {
        let dir = TestPaths.tempDir("catalog")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        chmod(dir, 0o755)
        func put(_ name: String, _ text: String, mode: mode_t = 0o644) {
            let f = dir + "/" + BundleManifest.fileName(name)
            _ = FileManager.default.createFile(atPath: f, contents: Data(text.utf8))
            chmod(f, mode)
        }
        put("demo", Self.good)
        put("broken", "{ name: 'broken' ")
        put("loose", Self.good.replacingOccurrences(of: "\"demo", with: "\"loose"), mode: 0o666)
        let c = BundleCatalog.scan([dir])
        #expect(c.names == ["device", "demo"], "\(c.refused)")
        #expect(c.refused.map(\.name).sorted() == ["broken", "loose"])
        #expect(c.refusedReasons.contains { $0.hasPrefix("loose:") && $0.contains("writable by others (mode 0666)") })
    }
}
