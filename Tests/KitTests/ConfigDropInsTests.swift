@testable import Config
import Foundation
import Support
import Testing

/// Config drop-ins (`config.d/*.json5` beside the main file): the order they apply in, the merge
/// rule (objects key by key, anything else replaced), which files are not read, and errors that
/// name the drop-in and the position in it.
@Suite struct ConfigDropInsTests {
    /// A main file and drop-ins in a private folder, removed by `cleanup()`.
    struct Files {
        let dir = TestPaths.tempDir("dropins")
        var main: String { dir + "/config.json5" }
        init(main text: String) throws {
            try FileManager.default.createDirectory(atPath: dir + "/config.d", withIntermediateDirectories: true)
            try text.write(toFile: main, atomically: true, encoding: .utf8)
        }
        func dropIn(_ name: String, _ text: String) throws {
            try text.write(toFile: dir + "/config.d/" + name, atomically: true, encoding: .utf8)
        }
        func cleanup() { try? FileManager.default.removeItem(atPath: dir) }
    }

    @Test func laterFilesWinObjectsMergeAndListsAreReplaced() throws {
        let f = try Files(main: """
            { node: { displayName: 'main', stateDir: '/srv/a' },
              gateway: { url: 'ws://127.0.0.1:1', token: 'from-main' },
              skills: { dirs: ['/x', '/y'] } }
            """); defer { f.cleanup() }
        try f.dropIn("20-name.json5", "{ node: { displayName: 'twenty' } }")
        try f.dropIn("10-gateway.json5", "// the fleet's gateway\n{ gateway: { url: 'ws://127.0.0.1:2' }, node: { displayName: 'ten' } }")
        try f.dropIn("30-skills.json5", "{ skills: { dirs: ['/z'] } }")
        let c = try ConfigLoader.load(path: f.main, environment: [:])
        #expect(c.displayName == "twenty")                    // 20 after 10
        #expect(c.gateway.url == "ws://127.0.0.1:2")          // a drop-in's key over the main file's
        #expect(c.gateway.token == "from-main")              // its sibling kept: objects merge
        #expect(c.stateDir == "/srv/a")
        #expect(c.skills.dirs == ["/z"])                      // a list is replaced, not appended to
        #expect(ConfigLoader.stateDir(path: f.main, environment: [:]) == "/srv/a")
        #expect(ConfigLoader.files(f.main).map(PathName.lastComponent) == ["config.json5", "10-gateway.json5", "20-name.json5", "30-skills.json5"])
    }

    @Test func nameOrderIsByteOrderAndOnlyVisibleJSON5FilesCount() throws {
        let f = try Files(main: "{}"); defer { f.cleanup() }
        try f.dropIn("9-late.json5", "{ node: { displayName: 'nine' } }")
        try f.dropIn("10-early.json5", "{ node: { displayName: 'ten' } }")       // "1" < "9": applies first
        try f.dropIn(".50-off.json5", "{ node: { displayName: 'hidden' } }")
        try f.dropIn("60-backup.json5~", "{ node: { displayName: 'backup' } }")
        try f.dropIn("70-old.json5.dpkg-old", "{ node: { displayName: 'old' } }")
        try f.dropIn("README", "not json")
        try FileManager.default.createDirectory(atPath: f.dir + "/config.d/80-dir.json5", withIntermediateDirectories: true)
        #expect(ConfigDropIns.files(for: f.main).map(PathName.lastComponent) == ["10-early.json5", "9-late.json5"])
        #expect(try ConfigLoader.load(path: f.main, environment: [:]).displayName == "nine")
    }

    @Test func errorsNameTheDropInAndThePositionInIt() throws {
        let f = try Files(main: "{ gateway: { url: 'ws://127.0.0.1:1' } }"); defer { f.cleanup() }
        let bad = f.dir + "/config.d/40-bad.json5"
        try f.dropIn("40-bad.json5", "{\n  gateway: { url: 5 },\n  nod: {} }")
        do { _ = try ConfigLoader.load(path: f.main, environment: [:]); Issue.record("a wrong type was accepted") } catch {
            guard case .invalid(let errs) = error else { Issue.record("\(error)"); return }
            #expect(errs.map(\.description) == [
                "\(bad):2:19: gateway.url: expected a string, found a number",
                "\(bad):3:3: nod: unknown key. Did you mean \"node\"?",
            ], "\(errs)")
        }
        try f.dropIn("40-bad.json5", "{ gateway: { url: ")
        do { _ = try ConfigLoader.load(path: f.main, environment: [:]); Issue.record("a syntax error was accepted") } catch {
            guard case .syntax(let e) = error else { Issue.record("\(error)"); return }
            #expect(e.file == bad && e.location.line == 1, "\(e)")
        }
        try f.dropIn("40-bad.json5", "['not', 'an', 'object']")
        do { _ = try ConfigLoader.load(path: f.main, environment: [:]); Issue.record("an array drop-in was accepted") } catch {
            #expect(error.description.hasPrefix("\(bad):1:1: a drop-in must be an object"), "\(error)")
        }
        // A value the main file gets wrong is still the main file's error, with a drop-in beside it.
        try f.dropIn("40-bad.json5", "{ node: { displayName: 'ok' } }")
        try "{ gateway: { url: true } }".write(toFile: f.main, atomically: true, encoding: .utf8)
        do { _ = try ConfigLoader.load(path: f.main, environment: [:]); Issue.record("accepted") } catch {
            #expect(error.description.hasPrefix("\(f.main):1:19: gateway.url"), "\(error)")
        }
    }

    @Test func originNamesTheFileThatSetEachKeyAndHidesSecrets() throws {
        let f = try Files(main: "{\n  gateway: { url: 'ws://127.0.0.1:1', token: 'sekrit' },\n  node: { displayName: 'a' },\n}"); defer { f.cleanup() }
        try f.dropIn("10-gw.json5", "{ gateway: { url: 'ws://127.0.0.1:2', password: '${GW_PASSWORD}' } }")
        let leaves = ConfigOrigin.leaves(of: try ConfigLoader.document(f.main))
        let byKey = Dictionary(uniqueKeysWithValues: leaves.map { ($0.keyPath, $0) })
        #expect(byKey["gateway.url"]?.file == f.dir + "/config.d/10-gw.json5")
        #expect(byKey["gateway.url"]?.location == SourceLocation(line: 1, column: 19))
        #expect(byKey["gateway.token"]?.file == f.main && byKey["gateway.token"]?.location.line == 2)
        #expect(byKey["node.displayName"]?.file == f.main)
        #expect(byKey["gateway.token"]?.holdsSecret == true)
        #expect(byKey["gateway.password"]?.holdsSecret == false)   // a ${NAME} reference names a variable
        #expect(byKey["gateway.url"]?.holdsSecret == false)
        #expect(leaves.map(\.keyPath) == ["gateway.url", "gateway.token", "gateway.password", "node.displayName"])
    }
}
