@testable import Config
import Foundation
@testable import Kit
@testable import Support
@testable import TestSupport
import Testing

/// The example bundle (Examples/hello-bundle), built as a package of its own, dropped beside a copy
/// of the installed node: the node validates its config section, advertises, documents, diagnoses
/// and serves it, with no line of the core knowing it. Then the ways a bundle's manifest is refused.
@Suite(.serialized) struct ExampleBundleTests {
    static var exampleBuild: String { TestPaths.repoRoot + "/Examples/hello-bundle/.build/debug" }

    /// An installed node plus the example bundle in its library directory.
    static func tree(_ config: String = "") throws -> BundleLoadingTests.InstallTree {
        let t = try BundleLoadingTests.InstallTree(config: config)
        for f in ["libopenclaw-hello.so"] {
            try FileManager.default.copyItem(atPath: exampleBuild + "/" + f, toPath: t.lib + "/" + f)
        }
        try FileManager.default.copyItem(atPath: TestPaths.repoRoot + "/Examples/hello-bundle/libopenclaw-hello.manifest.json5",
                                         toPath: t.lib + "/libopenclaw-hello.manifest.json5")
        chmod(t.lib + "/libopenclaw-hello.so", 0o755)
        chmod(t.lib + "/libopenclaw-hello.manifest.json5", 0o644)
        return t
    }

    static func json(_ r: ProcessResult) throws -> JSONValue { try #require(JSONValue.parse(r.stdout), "\(r.stdout)\(r.stderr)") }

    @Test func disabledByDefaultEveryCommandSaysSo() throws {
        let t = try Self.tree(); defer { t.cleanup() }
        let caps = try Self.json(try t.run(["caps", "--json"]))
        let rows = caps["table"]?.arrayValue?.filter { $0["capability"] == "hello" } ?? []
        #expect(rows.compactMap { $0["name"]?.stringValue } == ["hello.greet", "hello.count", "hello.stream"], "\(caps)")
        #expect(rows.allSatisfy { $0["advertised"] == false })
        #expect(caps["notAdvertised"]?.arrayValue?.contains("hello: disabled in config (capabilities.hello.enabled)") == true)
        for command in ["hello.greet", "hello.count"] {
            let r = try t.run(["invoke", command])
            #expect(r.code == 1)
            #expect(try Self.json(r)["code"] == "HELLO_DISABLED", "\(command): \(r.stdout)")
        }
    }

    @Test func enabledItIsValidatedAdvertisedDocumentedAndServed() throws {
        let t = try Self.tree("capabilities: { hello: { enabled: true, greeting: 'Hi', times: 2 } }"); defer { t.cleanup() }
        // Served, with the section's values (and a default where the file has none).
        let greet = try t.run(["invoke", "hello.greet", "--params", #"{"name":"Ada"}"#])
        #expect(try Self.json(greet)["text"] == "Hi, Ada! Hi, Ada!", "\(greet.stdout)\(greet.stderr)")
        // The presence gate and the clock the node hands a bundle (CapabilityContext).
        #expect(try Self.json(greet)["presence"] == "foreground", "\(greet.stdout)")
        let count = try t.run(["invoke", "hello.count"])
        #expect(try Self.json(count)["count"] == 1, "\(count.stdout)")
        #expect((try Self.json(count)["sinceLoadMs"]?.intValue).map { $0 >= 0 && $0 < 60_000 } == true, "\(count.stdout)")
        // Advertised in the connect manifest.
        let caps = try Self.json(try t.run(["caps", "--json"]))
        #expect(caps["caps"]?.arrayValue?.contains("hello") == true)
        #expect(caps["commands"]?.arrayValue?.contains("hello.count") == true)
        // Documented: the config reference, the man page, --version.
        let reference = try t.run(["config", "reference"]).stdout
        #expect(reference.contains("times: integer 1..5, default 1  — how often hello.greet says it"), "\(reference)")
        let man = try t.run(["help", "--man"]).stdout
        #expect(man.contains("hello.count") && man.contains("greetings and a counter"), "\(man.suffix(2000))")
        #expect(try t.run(["--version"]).stdout.contains("hello ("))
        // Its doctor check, and the gateway policy of its rows (no class given: the allowlist).
        let doctor = try Self.json(try t.run(["doctor", "--json"]))
        let findings = doctor["findings"]?.arrayValue?.filter { $0["area"] == "hello" }.compactMap { $0["text"]?.stringValue } ?? []
        #expect(findings.contains("greets with \"Hi\""), "\(findings)")
        #expect(doctor["gatewayPolicy"]?["hello.greet"] == "allowlist", "\(doctor)")
    }

    @Test func itsGateAndItsConfigAreTheManifests() throws {
        // hello.count is foreground-only in the manifest: refused while nobody is at the device.
        let t = try Self.tree("capabilities: { hello: { enabled: true } }, presence: { mode: 'never' }"); defer { t.cleanup() }
        let fg = try t.run(["invoke", "hello.count"])
        #expect(try Self.json(fg)["code"] == "NODE_BACKGROUND_UNAVAILABLE", "\(fg.stdout)")
        let greet = try Self.json(try t.run(["invoke", "hello.greet"]))
        #expect(greet["text"] == "Hello, world!")
        // The bundle reads the same presence decision the dispatcher's gate applied.
        #expect(greet["presence"] == "background", "\(greet)")
        // A value out of the manifest's range is a config error with its place, like any other.
        let bad = try Self.tree("capabilities: { hello: { enabled: true, times: 9, greting: 'x' } }"); defer { bad.cleanup() }
        let check = try bad.run(["config", "check"])
        #expect(check.code == 3, "\(check.stdout)\(check.stderr)")
        #expect(check.stderr.contains("capabilities.hello.times: must be between 1 and 5, found 9"), "\(check.stderr)")
        #expect(check.stderr.contains("capabilities.hello.greting: unknown key. Did you mean \"greeting\"?"), "\(check.stderr)")
    }

    /// A manifest that does not hold is refused like a bad library: with where and why.
    @Test func aBadManifestIsRefusedWithAReason() throws {
        let t = try Self.tree("capabilities: { hello: { enabled: true } }"); defer { t.cleanup() }
        let file = t.lib + "/libopenclaw-hello.manifest.json5"
        func write(_ text: String) { _ = FileManager.default.createFile(atPath: file, contents: Data(text.utf8)); chmod(file, 0o644) }
        func refusal() throws -> String {
            try Self.json(try t.run(["caps", "--json"]))["notAdvertised"]?.arrayValue?.compactMap(\.stringValue).first { $0.hasPrefix("hello:") } ?? ""
        }
        write("{ name: 'hello', summary: 'x', commands: { 'hello.greet': { summary: 'g', foregrond: true } } ")
        #expect(try refusal().contains("libopenclaw-hello.manifest.json5:1:"), "a syntax error names its place")
        write("{ name: 'hello', summary: 'x', commands: { 'hello.greet': { summary: 'g', foregrond: true } } }")
        #expect(try refusal().contains("commands.hello.greet.foregrond: unknown key. Did you mean \"foreground\"?"))
        write("{ name: 'other', summary: 'x', commands: { 'other.go': { summary: 'g' } } }")
        #expect(try refusal().contains("the manifest is for \"other\" but its file is named for \"hello\""))
        write("{ name: 'hello', summary: 'x', config: { n: { type: 'integer', doc: 'n' } }, commands: { 'hello.greet': { summary: 'g' } } }")
        #expect(try refusal().contains("an integer key needs \"min\" and \"max\""))
        // The manifest decides gates, so it is trusted like code: not writable by others.
        write(try String(contentsOfFile: TestPaths.repoRoot + "/Examples/hello-bundle/libopenclaw-hello.manifest.json5", encoding: .utf8))
        chmod(file, 0o666)
        let loose = try refusal()
        #expect(loose.contains("refused manifest") && loose.contains("chmod go-w"), "\(loose)")
        chmod(file, 0o644)
        // Code and manifest that disagree: the library does not serve a row the manifest declares.
        let text = try String(contentsOfFile: file, encoding: .utf8)
        write(text.replacingOccurrences(of: "\"hello.count\": {", with: "\"hello.extra\": { summary: \"x\" },\n    \"hello.count\": {"))
        let why = try refusal()
        #expect(why.contains("its manifest declares hello.extra, which its code does not serve"), "\(why)")
        #expect(try Self.json(try t.run(["invoke", "hello.greet"]))["code"] == "HELLO_UNAVAILABLE")
    }
}
