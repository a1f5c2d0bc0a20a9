@testable import Config
import Foundation
@testable import Kit
@testable import Support
@testable import TestSupport
import Testing

/// A bundle written from docs/ARCHITECTURE.md alone (Tests/fixtures/shapes-bundle, not part of the
/// product), dropped beside a copy of the node: its params are checked before its handler runs,
/// `caps`, the man page and `scripts/setup --list` show what its manifest declares, and a params
/// type that does not fit the manifest is refused at load, naming the field.
@Suite(.serialized) struct FixtureBundleTests {
    static let fixture = TestPaths.repoRoot + "/Tests/fixtures/shapes-bundle"

    static func tree(_ config: String) throws -> BundleLoadingTests.InstallTree {
        let t = try BundleLoadingTests.InstallTree(config: config)
        try FileManager.default.copyItem(atPath: fixture + "/.build/debug/libopenclaw-shapes.so", toPath: t.lib + "/libopenclaw-shapes.so")
        try FileManager.default.copyItem(atPath: fixture + "/libopenclaw-shapes.manifest.json5", toPath: t.lib + "/libopenclaw-shapes.manifest.json5")
        chmod(t.lib + "/libopenclaw-shapes.so", 0o755)
        chmod(t.lib + "/libopenclaw-shapes.manifest.json5", 0o644)
        return t
    }

    static func json(_ r: ProcessResult) throws -> JSONValue { try #require(JSONValue.parse(r.stdout), "\(r.stdout)\(r.stderr)") }

    @Test func badParamsAreRefusedBeforeTheHandlerRuns() throws {
        let t = try Self.tree("capabilities: { shapes: { enabled: true } }"); defer { t.cleanup() }
        let refusals: [(String, String)] = [
            (#"{"kind":"circle","size":500}"#, "INVALID_REQUEST: size must be between 1 and 100 (got 500)"),
            (#"{"kind":"hexagon"}"#, "INVALID_REQUEST: kind must be one of circle, square, star (got \"hexagon\")"),
            (#"{"size":5}"#, "INVALID_REQUEST: kind required"),
            (#"{"kind":"star","origin":{"x":1}}"#, "INVALID_REQUEST: origin.y required"),
            (#"{"kind":"star","origin":{"x":1,"y":4000}}"#, "INVALID_REQUEST: origin.y must be between 0 and 1000 (got 4000)"),
            (#"{"kind":"star","opacity":1.5}"#, "INVALID_REQUEST: opacity must be between 0 and 1 (got 1.5)"),
            (#"{"kind":"star","tags":["a",2]}"#, "INVALID_REQUEST: tags[1]: expected a string, found 2"),
        ]
        for (params, message) in refusals {
            let r = try t.run(["invoke", "shapes.draw", "--params", params])
            let answer = try Self.json(r)
            #expect(r.code == 1 && answer["message"]?.stringValue == message, "\(params): \(r.stdout)\(r.stderr)")
        }
        // The first call that reaches the handler is its first: none of the above did. Defaults filled in.
        let ok = try Self.json(try t.run(["invoke", "shapes.draw", "--params", #"{"kind":"star","origin":{"x":3,"y":4},"tags":["t"]}"#]))
        #expect(ok["text"] == "a star of size 10, opacity 1.0 at 3,4 [t]" && ok["calls"] == 1, "\(ok)")
    }

    @Test func capsTheManPageAndSetupShowWhatTheManifestDeclares() throws {
        let t = try Self.tree("capabilities: { shapes: { enabled: true } }"); defer { t.cleanup() }
        let row = try t.run(["caps", "shapes.draw"]).stdout
        for line in ["kind  one of circle, square, star, required: which shape", "size  integer 1..100, default 10: how big",
                     "origin  object {x: integer 0..1000, y: integer 0..1000}: where it goes", "  x  integer 0..1000, required: left",
                     "tags  array of string, default []: labels"] {
            #expect(row.contains(line), "\(line)\n\(row)")
        }
        let schema = try Self.json(try t.run(["caps", "shapes.draw", "--json"]))
        #expect(schema["required"] == ["kind"] && schema["properties"]?["origin"]?["required"] == ["x", "y"], "\(schema)")
        #expect(schema["properties"]?["kind"]?["enum"] == ["circle", "square", "star"])
        let man = try t.run(["help", "--man"]).stdout
        #expect(man.contains("size  integer 1..100, default 10: how big"), "\(man)")
        let setup = try runProcess("/bin/bash", [TestPaths.repoRoot + "/scripts/setup", "--list", "all", "trixie"],
                                   env: ["PATH": "/usr/bin:/bin", "OPENCLAW_SETUP_MANIFESTS": Self.fixture])
        #expect(setup.stdout.split(separator: "\n").contains("figlet"), "\(setup.stdout)\(setup.stderr)")
        let without = try runProcess("/bin/bash", [TestPaths.repoRoot + "/scripts/setup", "--list", "all", "trixie"], env: ["PATH": "/usr/bin:/bin"])
        #expect(!without.stdout.split(separator: "\n").contains("figlet"))
    }

    @Test func aParamsTypeThatDoesNotFitIsRefusedAtLoad() throws {
        let t = try Self.tree("capabilities: { shapes: { enabled: true, mismatch: true } }"); defer { t.cleanup() }
        let reason = try t.reason("shapes") ?? ""
        #expect(reason.contains("refused: the params of shapes.draw in its code do not fit its manifest")
                && reason.contains("reads origin.z, which the manifest does not declare"), "\(reason)")
        let r = try t.run(["invoke", "shapes.draw", "--params", #"{"kind":"star"}"#])
        let answer = try Self.json(r)
        #expect(r.code == 1 && answer["code"] == "SHAPES_UNAVAILABLE", "\(r.stdout)")
    }
}

/// scripts/setup reads the manifests' `packages` blocks with awk, before anything is built: it must
/// read them as the node's own reader does, for every manifest, kind and release.
struct SetupManifestReaderTests {
    @Test func setupReadsEveryManifestsPackagesAsTheNodeDoes() throws {
        var files = try FileManager.default.contentsOfDirectory(atPath: TestPaths.repoRoot + "/Sources/Capabilities").flatMap { d in
            try FileManager.default.contentsOfDirectory(atPath: TestPaths.repoRoot + "/Sources/Capabilities/" + d)
                .filter { $0.hasSuffix(".manifest.json5") }.map { TestPaths.repoRoot + "/Sources/Capabilities/\(d)/\($0)" }
        }
        files.append(FixtureBundleTests.fixture + "/libopenclaw-shapes.manifest.json5")
        #expect(files.count == 11)
        var compared = 0
        for file in files {
            let name = String(file.split(separator: "/").last!.dropFirst("libopenclaw-".count).dropLast(".manifest.json5".count))
            let m = try BundleManifestReader.read(try String(contentsOfFile: file, encoding: .utf8), file: file, expectedName: name, library: nil)
            for kind in PackageNeeds.kinds {
                for release in PackageNeeds.releases {
                    let r = try runProcess("/bin/bash", [TestPaths.repoRoot + "/scripts/setup", "--list-bundle", kind, release, file],
                                           env: ["PATH": "/usr/bin:/bin"])
                    let awk = r.stdout.split(separator: "\n").map(String.init)
                    #expect(awk == m.packages.names(kind, release: release), "\(name) \(kind) \(release): setup read \(awk)")
                    compared += awk.count
                }
            }
        }
        #expect(compared > 40, "the manifests declare packages (\(compared) read)")
    }
}
