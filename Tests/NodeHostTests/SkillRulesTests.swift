import Foundation
@testable import GatewaySession
@testable import Kit
@testable import Skills
@testable import Support
@testable import TestSupport
import Testing

/// The skills rules without a daemon: the frontmatter reader, the name rule, the catalog's checks
/// and budgets on real files, how gateway answers are taken, the retry schedule, and the cwd
/// locator's parsing.
@Suite struct SkillRulesTests {
    // MARK: frontmatter

    @Test func plainQuotedAndBlockScalars() throws {
        let fm = try SkillFrontmatter.parse("""
            ---
            name: release-notes
            description: "Write release notes: from \\"git log\\""
            # a comment
            license: 'it''s MIT'
            metadata:
              name: nested-not-top-level
              tags: [a, b]
            ---
            # Body
            """)
        #expect(fm["name"] == "release-notes")
        #expect(fm["description"] == "Write release notes: from \"git log\"")
        #expect(fm["license"] == "it's MIT")
        #expect(fm["metadata"] == "")  // its nested keys are not read as top-level ones

        let folded = try SkillFrontmatter.parse("---\r\nname: a\r\ndescription: >-\r\n  first line\r\n  second line\r\n\r\n  new paragraph\r\n---\r\nbody")
        #expect(folded["description"] == "first line second line\nnew paragraph")
        let literal = try SkillFrontmatter.parse("---\nname: a\ndescription: |\n  one\n  two\n---\n")
        #expect(literal["description"] == "one\ntwo\n")
        let continued = try SkillFrontmatter.parse("---\nname: a\ndescription: a long plain\n  value on two lines # and a comment\n---\n")
        #expect(continued["description"] == "a long plain value on two lines")
        #expect(try SkillFrontmatter.parse("\u{FEFF}---\nname: bom # comment\n---\n")["name"] == "bom")
        #expect(try SkillFrontmatter.parse("---\nname: a#b\n---\n")["name"] == "a#b")
    }

    @Test func missingUnterminatedAndMalformedFrontmatter() {
        #expect(throws: SkillFrontmatter.Problem.missing) { try SkillFrontmatter.parse("# Title\n---\nname: a\n---\n") }
        #expect(throws: SkillFrontmatter.Problem.unterminated) { try SkillFrontmatter.parse("---\nname: a\ndescription: b\n") }
        #expect(throws: SkillFrontmatter.Problem.malformedLine(3)) { try SkillFrontmatter.parse("---\nname: a\njust words\n---\n") }
    }

    // MARK: the name rule and the text checks

    @Test func nameRuleIsTheGatewaysPattern() {
        for ok in ["a", "release-notes", "x1", "a-b-c", "0", String(repeating: "a", count: 64)] { #expect(SkillName.isValid(ok), "\(ok)") }
        for bad in ["", "-a", "a-", "a--b", "A", "a_b", "a.b", "..", "a/b", "é", String(repeating: "a", count: 65), "a b"] {
            #expect(!SkillName.isValid(bad), "\(bad)")
        }
    }

    @Test func textChecksSayWhatIsWrongAndWhatToDo() {
        func reason(_ text: String, folder: String = "notes") -> String? {
            if case .failure(let v) = SkillCatalog.check(text, folder: folder) { return v.reason }
            return nil
        }
        #expect(reason("---\nname: notes\ndescription: Take notes\n---\nbody") == nil)
        #expect(reason("---\nname: other\ndescription: d\n---\n")?.contains("frontmatter name \"other\" is not its folder's name \"notes\"") == true)
        #expect(reason("---\nname: notes\n---\n")?.contains("no description; add description:") == true)
        #expect(reason("---\nname: notes\ndescription: \"\"\n---\n")?.contains("no description") == true)
        #expect(reason("---\ndescription: d\n---\n")?.contains("no name; add name: notes") == true)
        #expect(reason("---\nname: Bad--Name\ndescription: d\n---\n", folder: "Bad--Name")?.contains("is not a valid skill name") == true)
        #expect(reason("no frontmatter")?.contains("does not start with a frontmatter block") == true)
        let long = String(repeating: "é", count: 1025)
        #expect(reason("---\nname: notes\ndescription: \(long)\n---\n")?.contains("1025 characters, more than 1024") == true)
        #expect(reason("---\nname: notes\ndescription: \(String(repeating: "é", count: 1024))\n---\n") == nil, "1024 characters (2048 bytes) fit")
    }

    // MARK: the catalog on real files

    static func write(_ path: String, _ text: String) throws {
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }

    static func skill(_ name: String, body: String = "body") -> String { "---\nname: \(name)\ndescription: The \(name) skill\n---\n\(body)\n" }

    @Test func countAndTotalBudgetsAreTakenInNameOrder() throws {
        let root = TestPaths.tempDir("skills")
        for i in 0..<66 { try Self.write("\(root)/s\(String(i).leftPad(2))/SKILL.md", Self.skill("s\(String(i).leftPad(2))")) }
        let scan = SkillCatalog.scan(SkillSources(enabled: true, stateSkills: root, configured: []))
        #expect(scan.skills.count == 64)
        #expect(scan.skills.last?.name == "s63")
        #expect(scan.rejected.map { PathName.lastComponent($0.path) } == ["s64", "s65"])
        #expect(scan.rejected.allSatisfy { $0.reason.contains("more than 64 skills") })

        // 60 KiB each: eight fit in 512 KiB, the ninth does not; a small one after it still does.
        let big = TestPaths.tempDir("skills")
        let filler = String(repeating: "x", count: 60 * 1024)
        for i in 1...9 { try Self.write("\(big)/big-\(i)/SKILL.md", Self.skill("big-\(i)", body: filler)) }
        try Self.write("\(big)/small/SKILL.md", Self.skill("small"))
        let s2 = SkillCatalog.scan(SkillSources(enabled: true, stateSkills: big, configured: []))
        #expect(s2.skills.map(\.name) == (1...8).map { "big-\($0)" } + ["small"])
        #expect(s2.rejected.count == 1 && s2.rejected[0].path.hasSuffix("/big-9") && s2.rejected[0].reason.contains("512 KiB"), "\(s2.rejected)")
        #expect(s2.skills.reduce(0) { $0 + $1.content.utf8.count } <= SkillCatalog.maxTotalBytes)
    }

    @Test func laterDirectoriesAddSkillsButDoNotReplaceEarlierOnes() throws {
        let a = TestPaths.tempDir("skills"), b = TestPaths.tempDir("skills")
        try Self.write("\(a)/shared/SKILL.md", Self.skill("shared", body: "from a"))
        try Self.write("\(b)/shared/SKILL.md", Self.skill("shared", body: "from b"))
        try Self.write("\(b)/extra/SKILL.md", Self.skill("extra"))
        let scan = SkillCatalog.scan(SkillSources(enabled: true, stateSkills: a, configured: [b, "relative/dir", a + "/missing"]))
        #expect(scan.skills.map(\.name) == ["extra", "shared"])
        #expect(scan.skills.first { $0.name == "shared" }?.content.contains("from a") == true)
        #expect(scan.rejected.contains { $0.path == "\(b)/shared" && $0.reason.contains("already published from \(a)/shared") })
        #expect(scan.rejected.contains { $0.path == "relative/dir" && $0.reason.contains("absolute") })
        #expect(scan.rejected.contains { $0.path == a + "/missing" && $0.reason.contains("cannot open") })
        // The state directory's `skills` may not exist: that is no skills, not a problem.
        #expect(SkillCatalog.scan(SkillSources(enabled: true, stateSkills: a + "/none", configured: [])) == SkillScan())
    }

    @Test func fingerprintChangesWithAnEditAndNotWithout() throws {
        let root = TestPaths.tempDir("skills")
        try Self.write("\(root)/one/SKILL.md", Self.skill("one"))
        let sources = SkillSources(enabled: true, stateSkills: root, configured: [])
        let first = SkillFingerprint.take(sources)
        #expect(SkillFingerprint.take(sources) == first)
        try Self.write("\(root)/one/SKILL.md", Self.skill("one", body: "edited"))
        #expect(SkillFingerprint.take(sources) != first)
    }

    // MARK: publication rules

    @Test func gatewayAnswersAreTakenAsTheReferenceHostTakesThem() {
        func err(_ code: String, _ message: String) -> Result<JSONValue, GatewayProtocol.GatewayError> {
            .failure(GatewayProtocol.GatewayError(["code": .string(code), "message": .string(message)]))
        }
        #expect(SkillsPublisher.outcome(.success(["nodeId": "n", "skills": []]), protocolVersion: 4) == .accepted)
        if case .unsupported = SkillsPublisher.outcome(err("INVALID_REQUEST", "unknown method: node.skills.update"), protocolVersion: 4) {} else { Issue.record("unknown method") }
        if case .unsupported = SkillsPublisher.outcome(err("INVALID_REQUEST", "unauthorized role: node"), protocolVersion: 3) {} else { Issue.record("protocol 3") }
        // On protocol 4 the same words are a refusal of this value, not of the method.
        if case .refused = SkillsPublisher.outcome(err("INVALID_REQUEST", "unauthorized role: node"), protocolVersion: 4) {} else { Issue.record("protocol 4") }
        if case .refused = SkillsPublisher.outcome(err("INVALID_REQUEST", "invalid node.skills.update params"), protocolVersion: 4) {} else { Issue.record("invalid") }
        for code in ["UNAVAILABLE", "TIMEOUT", "CONNECTION_LOST"] {
            if case .transient = SkillsPublisher.outcome(err(code, "x"), protocolVersion: 4) {} else { Issue.record("\(code)") }
        }
    }

    @Test func retriesStartAt250MillisecondsAndDoubleToFiveSeconds() {
        var d: Duration? = nil
        var seen: [Int64] = []
        for _ in 0..<8 { d = SkillsPublisher.nextRetry(after: d); seen.append(d!.milliseconds) }
        #expect(seen == [250, 500, 1000, 2000, 4000, 5000, 5000, 5000])
    }

    // MARK: the cwd locator

    @Test func locatorParsing() throws {
        let dirs = ["notes": "/srv/skills/notes"]
        let id = "ab12cd"
        let l = SkillLocator(nodeId: { id }, directory: { dirs[$0] })
        #expect(try l.resolve(cwd: "node://ab12cd/skills/notes") == "/srv/skills/notes")
        #expect(try l.resolve(cwd: "NODE://%61b12cd/skills/notes") == "/srv/skills/notes", "scheme case and escapes in the id")
        #expect(try l.resolve(cwd: "/tmp") == "/tmp")
        #expect(try l.resolve(cwd: nil) == nil)
        for bad in ["node://other/skills/notes", "node://ab12cd", "node://ab12cd/", "node://ab12cd/skills/", "node://ab12cd/skills/..",
                    "node://ab12cd/skills/notes/..", "node://ab12cd/skills/%6eotes", "node://ab12cd/skills/notes%2F..",
                    "node://ab12cd/skill/notes", "node://ab12cd/skills/notes?x=1", "node://ab12cd/skills/notes/", "node://%zz/skills/notes",
                    "node://ab12cd%2Fskills/skills/notes", "node:///skills/notes"] {
            #expect(throws: SkillLocator.invalid, "\(bad)") { try l.resolve(cwd: bad) }
        }
        #expect(throws: SkillLocator.unavailable) { try l.resolve(cwd: "node://ab12cd/skills/other") }
        #expect(throws: SkillLocator.invalid) { try SkillLocator.none.resolve(cwd: "node://ab12cd/skills/notes") }
        #expect(SkillLocator.invalid.message == "INVALID_REQUEST: node skill cwd locator is invalid for this node")
        #expect(SkillLocator.unavailable.message == "INVALID_REQUEST: node skill cwd locator is unavailable")
    }
}

private extension String {
    func leftPad(_ n: Int) -> String { count >= n ? self : String(repeating: "0", count: n - count) + self }
}
