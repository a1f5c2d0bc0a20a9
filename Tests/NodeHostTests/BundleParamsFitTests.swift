@testable import Config
@testable import HostPresence
@testable import Kit
@testable import NodeDaemon
@testable import Support
@testable import TestSupport
import Testing

/// Every installed bundle, loaded: its code's params types fit its manifest's rows (the check the
/// loader makes before a bundle serves anything, ParamsSchemaProbe).
struct BundleParamsFitTests {
    @Test func everyBundlesParamsTypesFitItsManifest() throws {
        let names = BundleCatalog.current.bundles.map(\.name)
        #expect(names.count >= 10, "the built bundles' manifests are beside the tests: \(names)")
        let sections = names.map { "\($0): { enabled: true }" }.joined(separator: ", ")
        let config = try ConfigLoader.parse("{ capabilities: { \(sections) } }", file: "fit.json5", environment: ["HOME": "/nonexistent"])
        let caps = try NodeRuntime.capabilities(config: config, presence: FixedPresenceSource(.foreground, reason: "test"))
        var loaded = 0
        for cap in caps where !(cap is UnloadedCapability) {
            loaded += 1
            #expect(cap.handlerMismatch == nil, "\(cap.name): \(cap.handlerMismatch ?? "")")
        }
        #expect(loaded >= names.count, "every bundle loaded (\(loaded) of \(names.count))")
    }

    @Test func capsShowsACommandsParamsFromItsManifest() throws {
        let r = try runProcess(TestPaths.nodeBinary, ["caps", "camera.snap"], env: ["HOME": "/nonexistent", "PATH": "/usr/bin:/bin"])
        #expect(r.stdout.contains("maxWidth  integer 16..8192, default 1600: "), "\(r.stdout)\(r.stderr)")
        #expect(r.stdout.contains("facing  one of front, back: "))
        let schema = try runProcess(TestPaths.nodeBinary, ["caps", "location.get", "--json"], env: ["HOME": "/nonexistent", "PATH": "/usr/bin:/bin"])
        let doc = try #require(JSONValue.parse(schema.stdout), "\(schema.stdout)\(schema.stderr)")
        #expect(doc["properties"]?["timeoutMs"]?["maximum"] == 60000 && doc["properties"]?["timeoutMs"]?["default"] == 10000)
        let unknown = try runProcess(TestPaths.nodeBinary, ["caps", "camera.snp"], env: ["HOME": "/nonexistent", "PATH": "/usr/bin:/bin"])
        #expect(unknown.code != 0 && unknown.stderr.contains("Did you mean camera.snap?"))
    }

    /// The docs' command tables are printed from the manifests: docs/COMMANDS.md is what
    /// `caps --markdown` prints (regenerate it with `openclaw-node caps --markdown > docs/COMMANDS.md`).
    @Test func theDocsCommandTablesAreTheManifests() throws {
        let r = try runProcess(TestPaths.nodeBinary, ["caps", "--markdown"], env: ["HOME": "/nonexistent", "PATH": "/usr/bin:/bin"])
        let file = try String(contentsOfFile: TestPaths.repoRoot + "/docs/COMMANDS.md", encoding: .utf8)
        #expect(r.stdout == file, "docs/COMMANDS.md is stale: run .build/debug/openclaw-node caps --markdown > docs/COMMANDS.md")
        #expect(file.contains("| `maxWidth` | integer 16..8192 | 1600 |"))
    }
}
