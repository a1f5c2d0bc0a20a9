@testable import Config
import Foundation
@testable import Kit
@testable import Support
@testable import TestSupport
import Testing

/// First-boot provisioning: a boot-partition file with a setup code for the test gateway → the
/// settings in a drop-in, the code in the private state, the file gone; the node pairs on its
/// first start, the code is spent and removed, and the second start uses the stored device token.
/// A file with errors changes nothing. `pair` reads its code from standard input or a file.
@Suite(.serialized) struct ProvisioningTests {
    static func mode(_ path: String) -> Int { ((try? FileManager.default.attributesOfItem(atPath: path))?[.posixPermissions] as? Int) ?? -1 }

    @Test func aBootFileProvisionsPairsOnceAndLeavesNoSecretBehind() throws {
        let gw = try TestGateway(stateFile: TestPaths.tempDir("gw") + "/gateway.json", args: ["--bootstrap", "boot-prov-1"])
        defer { gw.stop() }
        let node = PairCommandTests.bareNode(); defer { node.cleanup() }
        let boot = TestPaths.tempDir("bootfs"); defer { try? FileManager.default.removeItem(atPath: boot) }
        let code = PairCommandTests.code(["url": .string(gw.url), "bootstrapToken": "boot-prov-1", "expiresAtMs": PairCommandTests.inTenMinutes])
        let file = boot + "/openclaw-node.json5"
        try """
            // Written by the image builder
            { gateway: { setupCode: "oc-pair://\(code)" }, node: { displayName: "Classroom Pi 7" } }
            """.write(toFile: file, atomically: true, encoding: .utf8)

        let r = try node.cli(["provision", "--from", file])
        #expect(r.code == 0, "\(r.stdout)\(r.stderr)")
        #expect(r.stdout.contains("took a setup code, display name \"Classroom Pi 7\" from \(file) and removed it"), "\(r.stdout)")
        #expect(!FileManager.default.fileExists(atPath: file), "the secret stayed on the boot partition")
        let dropIn = node.dir + "/config.d/10-provisioned.json5"
        let written = try String(contentsOfFile: dropIn, encoding: .utf8)
        #expect(written.contains("Classroom Pi 7") && !written.contains(code), "\(written)")
        #expect(Self.mode(dropIn) == 0o640)
        let stored = node.dir + "/state/setup-code"
        #expect(Self.mode(stored) == 0o600)

        // First start: pairs with the bootstrap token under the provisioned name; the code is spent.
        try node.start()
        let hello = try #require(gw.waitFor("hello", timeout: 20), "\(node.log)")
        #expect(hello["auth"] == ["bootstrapToken"])
        #expect(gw.all("connect").last?["client"]?["displayName"] == "Classroom Pi 7")
        #expect(waitUntil(timeout: 10) { !FileManager.default.fileExists(atPath: stored) }, "\(node.log)")
        #expect(node.log.contains("using the setup code this node was provisioned with"), "\(node.log)")
        #expect(node.stop() == 0)
        #expect(PairCommandTests.stateBytes(node).range(of: Data("boot-prov-1".utf8)) == nil, "the bootstrap token reached the state database")

        // Second start: the stored device token, no second pairing.
        try node.start()
        let again = try #require(gw.waitFor("hello", timeout: 20), "\(node.log)")
        #expect(again["auth"] == ["deviceToken"], "\(again)")
        #expect(gw.all("pairing_requested").count <= 1)
        #expect(gw.schemaErrors.isEmpty)
    }

    @Test func aFileWithErrorsChangesNothingAndATextFileHoldsJustTheCode() throws {
        let node = PairCommandTests.bareNode(); defer { node.cleanup() }
        let boot = TestPaths.tempDir("bootfs"); defer { try? FileManager.default.removeItem(atPath: boot) }
        let bad = boot + "/openclaw-node.json5"
        try "{\n  gateway: { setupCode: 'oc-pair://abc' },\n  nod: { displayName: 'x' } }".write(toFile: bad, atomically: true, encoding: .utf8)
        let r = try node.cli(["provision", "--from", bad])
        #expect(r.code == 3 && r.stderr.contains("\(bad):3:3: nod: unknown key") && r.stderr.contains("was left in place"), "\(r.stderr)")
        #expect(FileManager.default.fileExists(atPath: bad))
        #expect(!FileManager.default.fileExists(atPath: node.dir + "/config.d/10-provisioned.json5"))

        let text = boot + "/openclaw-node-setup.txt"
        try "# from the imager\n\n  oc-pair://\(PairCommandTests.code(["url": "ws://127.0.0.1:9", "bootstrapToken": "t"]))  \n".write(toFile: text, atomically: true, encoding: .utf8)
        let t = try node.cli(["provision", "--from", text])
        #expect(t.code == 0, "\(t.stdout)\(t.stderr)")
        #expect(!FileManager.default.fileExists(atPath: text))
        #expect((try? String(contentsOfFile: node.dir + "/state/setup-code", encoding: .utf8))?.hasPrefix("oc-pair://") == true)
        // Nothing left to do: says so, changes nothing.
        let none = try node.cli(["provision", "--from", boot + "/missing.json5"])
        #expect(none.code != 0 || none.stdout.contains("nothing to do"), "\(none.stdout)\(none.stderr)")
    }

    @Test func pairReadsTheCodeFromStandardInputOrAFile() throws {
        let gw = try TestGateway(stateFile: TestPaths.tempDir("gw") + "/gateway.json", args: ["--bootstrap", "boot-stdin"])
        defer { gw.stop() }
        let node = PairCommandTests.bareNode(); defer { node.cleanup() }
        let code = PairCommandTests.code(["url": .string(gw.url), "bootstrapToken": "boot-stdin", "expiresAtMs": PairCommandTests.inTenMinutes])
        let r = try runProcess(TestPaths.nodeBinary, ["pair", "-", "--config", node.configPath], env: node.env, stdin: "# cloud-init\n\(code)\n")
        #expect(r.code == 0 && r.stdout.contains("Paired with \(gw.url)"), "\(r.stdout)\(r.stderr)")
        #expect(gw.waitFor("hello")?["auth"] == ["bootstrapToken"])

        let empty = try runProcess(TestPaths.nodeBinary, ["pair", "-", "--config", node.configPath], env: node.env, stdin: "\n# nothing\n")
        #expect(empty.code == 64 && empty.stderr.contains("no setup code on standard input"), "\(empty.code) \(empty.stderr)")
        let file = node.dir + "/code.txt"
        try "oc-pair://!!!\n".write(toFile: file, atomically: true, encoding: .utf8)
        let refused = try node.cli(["pair", "--from-file", file])
        #expect(refused.code == 1 && refused.stderr.contains("Invalid pairing setup code or URL."), "\(refused.stderr)")
    }
}
