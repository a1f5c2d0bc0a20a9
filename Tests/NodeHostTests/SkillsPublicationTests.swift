import Foundation
@testable import Support
@testable import TestSupport
import Testing

/// node.skills.update through the real daemon and the test gateway (which checks every update
/// against the closed 2026.8 schema and records it as `skills_update`): published after hello-ok,
/// republished when a skill changes on disk or the config is reloaded, never resent unchanged, and
/// answered as the reference host answers an older gateway, a refusal and a transient failure.
@Suite(.serialized) struct SkillsPublicationTests {
    /// A daemon whose state directory already holds `skills`, and its gateway.
    final class Rig: @unchecked Sendable {
        let gw: TestGateway
        let node: NodeUnderTest
        var skillsDir: String { node.dir + "/state/skills" }

        init(gatewayArgs: [String] = [], extra: String = "", env: [String: String] = [:], before: (Rig) throws -> Void = { _ in }) throws {
            gw = try TestGateway(stateFile: TestPaths.tempDir("gw") + "/gw.json", args: ["--auto-approve"] + gatewayArgs)
            node = NodeUnderTest(gatewayURL: gw.url, extra: extra)
            node.extraEnv = env
            // The state directory as the node makes it (0700), with the skills in it before start.
            try FileManager.default.createDirectory(atPath: node.dir + "/state/skills", withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
            try before(self)
            try node.start()
            guard gw.waitFor("hello") != nil else { throw TestFailure("no hello: \(node.log)") }
        }

        func stop() { node.cleanup(); gw.stop() }

        @discardableResult
        func write(_ relative: String, _ text: String, in root: String? = nil) throws -> String {
            let path = (root ?? skillsDir) + "/" + relative
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }

        func update(_ predicate: @escaping (JSONValue) -> Bool = { _ in true }) -> JSONValue? {
            gw.waitFor("skills_update", timeout: 20, where: predicate)
        }

        func names(_ u: JSONValue?) -> [String] { u?["skills"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? [] }
    }

    static func skill(_ name: String, _ description: String = "Does things", body: String = "Steps.") -> String {
        "---\nname: \(name)\ndescription: \(description)\n---\n# \(name)\n\n\(body)\n"
    }

    @Test func publishedAfterHelloWithTheFullTextAndCountedInStatus() throws {
        let text = Self.skill("release-notes", "Write release notes from git log", body: "Run `git log`; group by type.")
        let r = try Rig { try $0.write("release-notes/SKILL.md", text) }; defer { r.stop() }
        let u = try #require(r.update(), "\(r.node.log)")
        #expect(u["skills"] == [["name": "release-notes", "description": "Write release notes from git log", "content": .string(text)]])
        #expect(u["answer"] == "ok")
        #expect(waitUntil(timeout: 10) { r.node.log.contains("node.skills.update: published 1 skill") }, "\(r.node.log)")
        #expect(try r.node.status()?["daemon"]?["skillsPublished"] == 1)
        #expect(r.gw.schemaErrors.isEmpty, "\(r.gw.schemaErrors)")
    }

    @Test func newAndEditedSkillsAreRepublishedAndAnUnchangedOneIsNot() throws {
        let r = try Rig { try $0.write("alpha/SKILL.md", Self.skill("alpha")) }; defer { r.stop() }
        #expect(r.names(r.update()) == ["alpha"], "\(r.node.log)")
        // Touched but the same text: read again, not sent again.
        let alpha = r.skillsDir + "/alpha/SKILL.md"
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(5)], ofItemAtPath: alpha)
        #expect(waitUntil(timeout: 15) { r.node.log.contains("skills read again, unchanged since the gateway accepted them; not sent") }, "\(r.node.log)")
        // A new skill, without a restart.
        try r.write("beta/SKILL.md", Self.skill("beta"))
        #expect(r.names(r.update()) == ["alpha", "beta"], "\(r.node.log)")
        // An edit.
        try r.write("alpha/SKILL.md", Self.skill("alpha", "Does other things"))
        let edited = try #require(r.update(), "\(r.node.log)")
        #expect(edited["skills"]?.arrayValue?.first?["description"] == "Does other things")
        // A reload (SIGHUP) with an unchanged config reads them again and sends nothing.
        let reloads = r.node.log.components(separatedBy: "config reloaded").count
        kill(r.node.process!.pid, SIGHUP)
        #expect(waitUntil(timeout: 10) { r.node.log.components(separatedBy: "config reloaded").count > reloads })
        #expect(waitUntil(timeout: 10) { r.node.log.components(separatedBy: "unchanged since the gateway accepted them").count >= 3 }, "\(r.node.log)")
        #expect(r.gw.all("skills_update").count == 3, "\(r.gw.all("skills_update"))")
        #expect(r.gw.schemaErrors.isEmpty, "\(r.gw.schemaErrors)")
    }

    @Test func everyNewSessionPublishesAgainEvenUnchanged() throws {
        // The gateway keeps a node's skills with its connection: a new session starts without them.
        let r = try Rig(env: ["OPENCLAW_NODE_RECONNECT_INITIAL_MS": "100", "OPENCLAW_NODE_RECONNECT_MAX_MS": "400"]) {
            try $0.write("alpha/SKILL.md", Self.skill("alpha"))
        }
        defer { r.stop() }
        let first = try #require(r.update(), "\(r.node.log)")
        r.gw.command(["cmd": "close", "code": 1000])
        #expect(r.gw.waitFor("hello") != nil, "\(r.node.log)")
        let second = try #require(r.update(), "\(r.node.log)")
        #expect(second["skills"] == first["skills"])
    }

    @Test func aReloadThatAddsADirectoryPublishesItsSkills() throws {
        let r = try Rig { try $0.write("alpha/SKILL.md", Self.skill("alpha")) }; defer { r.stop() }
        #expect(r.names(r.update()) == ["alpha"])
        let extra = r.node.dir + "/more-skills"
        try r.write("gamma/SKILL.md", Self.skill("gamma"), in: extra)
        r.node.rewriteConfig(gatewaySection: "url: '\(r.gw.url)'", extra: "skills: { dirs: ['~/more-skills'] }")
        kill(r.node.process!.pid, SIGHUP)
        #expect(r.names(r.update()) == ["alpha", "gamma"], "\(r.node.log)")
        #expect(r.gw.all("disconnect").isEmpty, "skills alone do not renew the session")
    }

    @Test func aGatewayWithoutTheMethodIsAskedOnceAndNeverAgain() throws {
        let r = try Rig(gatewayArgs: ["--skills-answer", "unknown"]) { try $0.write("alpha/SKILL.md", Self.skill("alpha")) }
        defer { r.stop() }
        #expect(r.update() != nil, "\(r.node.log)")
        #expect(waitUntil(timeout: 10) { r.node.log.contains("this gateway does not take node-hosted skills (INVALID_REQUEST: unknown method: node.skills.update)") },
                "\(r.node.log)")
        // A change would be published on a gateway that has the method (see above); not on this one.
        try r.write("beta/SKILL.md", Self.skill("beta"))
        #expect(r.gw.waitFor("skills_update", timeout: 6) == nil, "\(r.gw.all("skills_update"))")
        #expect(r.gw.all("skills_update").count == 1)
    }

    @Test func transientFailuresAreRetriedUntilAcceptedAndARefusedValueIsNotResent() throws {
        let r = try Rig(gatewayArgs: ["--skills-answer", "unavailable"]) { try $0.write("alpha/SKILL.md", Self.skill("alpha")) }
        defer { r.stop() }
        for _ in 0..<3 { #expect(r.update() != nil, "\(r.node.log)") }
        #expect(r.node.log.contains("node.skills.update: not accepted (UNAVAILABLE: skills store unavailable); retrying from 250 ms"), "\(r.node.log)")
        r.gw.command(["cmd": "skills_answer", "mode": "ok"])
        #expect(waitUntil(timeout: 20) { r.node.log.contains("node.skills.update: published 1 skill") }, "\(r.node.log)")
        let accepted = r.gw.all("skills_update").count
        #expect(r.gw.all("skills_update").last?["answer"] == "ok")

        // A refusal: the same value is not sent again, a changed one is.
        r.gw.command(["cmd": "skills_answer", "mode": "invalid"])
        _ = r.gw.waitFor("skills_answer_set")
        try r.write("beta/SKILL.md", Self.skill("beta"))
        #expect(waitUntil(timeout: 15) { r.node.log.contains("the gateway refused the skills") }, "\(r.node.log)")
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(5)], ofItemAtPath: r.skillsDir + "/beta/SKILL.md")
        #expect(waitUntil(timeout: 15) { r.node.log.contains("still the value the gateway refused; not sent") }, "\(r.node.log)")
        #expect(r.gw.all("skills_update").count == accepted + 1)
        r.gw.command(["cmd": "skills_answer", "mode": "ok"])
        _ = r.gw.waitFor("skills_answer_set")
        try r.write("beta/SKILL.md", Self.skill("beta", "Changed"))
        #expect(waitUntil(timeout: 15) { r.gw.all("skills_update").last?["answer"] == "ok" && r.gw.all("skills_update").count == accepted + 2 },
                "\(r.gw.all("skills_update").count) \(r.node.log)")
        #expect(r.gw.schemaErrors.isEmpty, "\(r.gw.schemaErrors)")
    }

    @Test func invalidSkillsAreRefusedWithAReasonWhileValidOnesPublish() throws {
        let outside = TestPaths.tempDir("outside")
        let r = try Rig { r in
            try r.write("good/SKILL.md", Self.skill("good"))
            try r.write("mismatch/SKILL.md", Self.skill("other-name"))
            try r.write("no-description/SKILL.md", "---\nname: no-description\n---\nbody\n")
            try r.write("oversized/SKILL.md", Self.skill("oversized", body: String(repeating: "x", count: 70_000)))
            try r.write("SKILL.md", Self.skill("skills"))
            try r.write(".hidden/SKILL.md", Self.skill("hidden"))
            try r.write("empty-folder/.keep", "")
            // Links that lead out of the skills directory: a whole folder, and one SKILL.md.
            try r.write("escaped/SKILL.md", Self.skill("escaped"), in: outside)
            try FileManager.default.createSymbolicLink(atPath: r.skillsDir + "/escaped", withDestinationPath: outside + "/escaped")
            try r.write("secret/SKILL.md", Self.skill("secret"), in: outside)
            try FileManager.default.createDirectory(atPath: r.skillsDir + "/secret", withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(atPath: r.skillsDir + "/secret/SKILL.md", withDestinationPath: outside + "/secret/SKILL.md")
            let open = try r.write("world-writable/SKILL.md", Self.skill("world-writable"))
            chmod(open, 0o666)
            // The plugins' trust rule: a folder of another account, and one a shared group may write.
            if geteuid() == 0 {
                let theirs = try r.write("theirs/SKILL.md", Self.skill("theirs"))
                chown(PathName.directory(theirs), 65534, 65534); chown(theirs, 65534, 65534)
                let shared = try r.write("shared-group/SKILL.md", Self.skill("shared-group"))
                chown(PathName.directory(shared), 0, 65534); chmod(PathName.directory(shared), 0o775)
            }
        }
        defer { r.stop() }
        let u = try #require(r.update(), "\(r.node.log)")
        #expect(r.names(u) == ["good"], "\(u)")
        let log = r.node.log
        let dir = (r.skillsDir as NSString).resolvingSymlinksInPath
        for expected in [
            "\(dir)/mismatch/SKILL.md: its frontmatter name \"other-name\" is not its folder's name \"mismatch\"",
            "\(dir)/no-description/SKILL.md: its frontmatter has no description",
            "\(dir)/oversized: SKILL.md is 70",
            "\(dir)/SKILL.md: a SKILL.md directly in the skills directory is not a skill",
            "\(dir)/escaped: is a symbolic link",
            "\(dir)/secret: SKILL.md is a symbolic link",
            "\(dir)/world-writable: it is writable by others",
            "\(dir)/empty-folder: has no SKILL.md",
        ] {
            #expect(log.contains("skill not published: \(expected)"), "\(expected)\n\(log)")
        }
        if geteuid() == 0 {
            #expect(log.contains("skill not published: \(dir)/theirs: it belongs to uid 65534"), "\(log)")
            #expect(log.contains("skill not published: \(dir)/shared-group: it is writable by its group (gid 65534)"), "\(log)")
        }
        #expect(!log.contains(".hidden"), "dot-directories are skipped silently")
        // One line each, however often the session asks.
        #expect(log.components(separatedBy: "skill not published: \(dir)/mismatch/").count == 2)
        // Doctor lists the same.
        let doctor = try r.node.cli(["doctor"]).stdout
        #expect(doctor.contains("good: \(dir)/good"), "\(doctor)")
        #expect(doctor.contains("not published: \(dir)/mismatch/SKILL.md"), "\(doctor)")
        #expect(r.gw.schemaErrors.isEmpty, "\(r.gw.schemaErrors)")
    }

    @Test func disabledSendsNothingAtAll() throws {
        let r = try Rig(extra: "skills: { enabled: false }") { try $0.write("alpha/SKILL.md", Self.skill("alpha")) }
        defer { r.stop() }
        #expect(waitUntil(timeout: 10) { r.node.log.contains("skills.enabled is false: no node.skills.update on this session") }, "\(r.node.log)")
        #expect(r.gw.waitFor("skills_update", timeout: 3) == nil)
        #expect(try r.node.status()?["daemon"]?["skillsPublished"] == .null)
    }
}
