import Foundation
@testable import Support
@testable import TestSupport
import Testing

/// A node-hosted skill's locator `node://<node id>/skills/<name>` as system.run's cwd, through the
/// real daemon and the test gateway: it runs in that skill's directory; another node's id, a way
/// out of the name (`..`, escapes, encoded slashes) and a skill the node does not publish are
/// refused with the gateway's exact words before anything runs; and the mapped directory meets
/// the same exec policy and sandbox as the path given directly.
@Suite(.serialized) struct SkillCwdTests {
    /// A paired daemon with the system capability on (and `skills`, when given), and its gateway.
    final class Rig: @unchecked Sendable {
        let gw: TestGateway
        let node: NodeUnderTest
        let work: String

        init(system: String = "", skills: String = "") throws {
            gw = try TestGateway(stateFile: TestPaths.tempDir("gw") + "/gw.json", args: ["--auto-approve"])
            node = NodeUnderTest(gatewayURL: gw.url, extra: "capabilities: { system: { enabled: true, \(system) } }, skills: { \(skills) }")
            work = node.dir + "/work"
            try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
            try node.start()
            guard gw.waitFor("hello") != nil else { throw TestFailure("no hello: \(node.log)") }
        }

        func run(_ params: JSONValue) throws -> JSONValue {
            try #require(gw.invoke("system.run", paramsJSON: params.jsonString(), timeoutMs: 60_000, wait: 30), "\(node.log)")
        }

        func call(_ command: String, _ params: JSONValue = [:]) throws -> JSONValue {
            try #require(gw.invoke(command, paramsJSON: params.jsonString()), "\(node.log)")
        }

        func stop() { node.cleanup(); gw.stop() }
    }

    static func argv(_ w: String...) -> JSONValue { .array(w.map { .string($0) }) }
    static let invalid = "INVALID_REQUEST: node skill cwd locator is invalid for this node"
    static let unavailable = "INVALID_REQUEST: node skill cwd locator is unavailable"

    static func addSkill(_ root: String, _ name: String) throws -> String {
        let dir = root + "/" + name
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try "---\nname: \(name)\ndescription: The \(name) skill\n---\nRun ./tool.sh\n".write(toFile: dir + "/SKILL.md", atomically: true, encoding: .utf8)
        return (dir as NSString).resolvingSymlinksInPath
    }

    static func nodeId(_ r: Rig) throws -> String { try #require(try r.node.status()?["deviceId"]?.stringValue) }

    @Test func aLocatorRunsInTheSkillsDirectory() throws {
        let r = try Rig(); defer { r.stop() }
        let dir = try Self.addSkill(r.node.dir + "/state/skills", "notes")
        let id = try Self.nodeId(r)
        let locator = "node://\(id)/skills/notes"
        let res = try r.run(["command": Self.argv("/bin/sh", "-c", "pwd; head -2 SKILL.md | tail -1"), "cwd": .string(locator)])
        #expect(res["payload"]?["stdout"] == .string(dir + "\nname: notes\n"), "\(res)")
        // The node id percent-encoded (as the gateway may send it) is the same node.
        let encoded = "node://" + id.utf8.map { "%" + String($0, radix: 16) }.joined() + "/skills/notes"
        #expect(try r.run(["command": Self.argv("pwd"), "cwd": .string(encoded)])["payload"]?["stdout"] == .string(dir + "\n"))
        // prepare: the plan keeps the locator, and the run that carries that plan maps both alike.
        let prep = try r.call("system.run.prepare", ["command": Self.argv("pwd"), "cwd": .string(locator)])
        let plan = try #require(prep["payload"]?["plan"], "\(prep)")
        #expect(plan["cwd"] == .string(locator))
        let planned = try r.run(["command": Self.argv("pwd"), "cwd": .string(locator), "systemRunPlan": plan])
        #expect(planned["payload"]?["stdout"] == .string(dir + "\n"), "\(planned)")
        #expect(r.gw.schemaErrors.isEmpty, "\(r.gw.schemaErrors)")
    }

    @Test func otherNodesWaysOutAndUnknownSkillsAreRefusedBeforeAnythingRuns() throws {
        let r = try Rig(); defer { r.stop() }
        let skills = r.node.dir + "/state/skills"
        _ = try Self.addSkill(skills, "notes")
        // A folder that is a link out of the skills directory is not a published skill.
        _ = try Self.addSkill(r.node.dir + "/elsewhere", "linked")
        try FileManager.default.createSymbolicLink(atPath: skills + "/linked", withDestinationPath: r.node.dir + "/elsewhere/linked")
        let id = try Self.nodeId(r)
        let marker = r.work + "/ran"
        let attacks: [(cwd: String, says: String)] = [
            ("node://\(String(repeating: "0", count: 64))/skills/notes", Self.invalid),
            ("node://\(id.uppercased())x/skills/notes", Self.invalid),
            ("node://\(id)/skills/..", Self.invalid),
            ("node://\(id)/skills/../../..", Self.invalid),
            ("node://\(id)/skills/notes/..", Self.invalid),
            ("node://\(id)/skills/notes/../../keys", Self.invalid),
            ("node://\(id)/skills/%2e%2e", Self.invalid),
            ("node://\(id)/skills/notes%2F..%2F..", Self.invalid),
            ("node://\(id)%2Fskills%2Fnotes/skills/notes", Self.invalid),
            ("node://\(id)/skills/notes?x=/", Self.invalid),
            ("node://\(id)/skills/Notes", Self.invalid),
            ("node://\(id)/other/notes", Self.invalid),
            ("node://\(id)", Self.invalid),
            ("node://\(id)/skills/missing", Self.unavailable),
            ("node://\(id)/skills/linked", Self.unavailable),
        ]
        for a in attacks {
            let res = try r.run(["command": Self.argv("/bin/sh", "-c", "touch \(marker); pwd"), "cwd": .string(a.cwd)])
            #expect(res["ok"] == false && res["error"]?["code"] == "INVALID_REQUEST" && res["error"]?["message"] == .string(a.says),
                    "\(a.cwd): \(res)")
            let prep = try r.call("system.run.prepare", ["command": Self.argv("pwd"), "cwd": .string(a.cwd)])
            #expect(prep["error"]?["message"] == .string(a.says), "prepare \(a.cwd): \(prep)")
        }
        #expect(!FileManager.default.fileExists(atPath: marker), "nothing ran")
        // Next to them, the legitimate locator still runs.
        let ok = try r.run(["command": Self.argv("pwd"), "cwd": .string("node://\(id)/skills/notes")])
        #expect(ok["payload"]?["stdout"] == .string((skills as NSString).resolvingSymlinksInPath + "/notes\n"), "\(ok)")
    }

    @Test func theMappedDirectoryMeetsTheSandboxAsThePathWould() throws {
        let r = try Rig(system: "sandbox: 'bwrap'", skills: "dirs: ['~/team-skills']"); defer { r.stop() }
        let inState = try Self.addSkill(r.node.dir + "/state/skills", "private-notes")
        let team = try Self.addSkill(r.node.dir + "/team-skills", "team")
        let id = try Self.nodeId(r)
        // A skill in the state directory: the sandbox hides the state, so the cwd is refused
        // exactly as the directory given by path is.
        let byLocator = try r.run(["command": Self.argv("pwd"), "cwd": .string("node://\(id)/skills/private-notes")])
        let byPath = try r.run(["command": Self.argv("pwd"), "cwd": .string(inState)])
        let said = byPath["error"]?["message"]?.stringValue ?? ""
        #expect(said.hasPrefix("SYSTEM_RUN_DENIED: sandbox: cwd") && said.contains("is inside the node's state directory"), "\(byPath)")
        #expect(byLocator["error"] == byPath["error"], "\(byLocator)")
        // A configured skills directory in the home runs sandboxed, with the state still hidden.
        let ok = try r.run(["command": Self.argv("/bin/sh", "-c", "pwd; ls -A \(r.node.dir)/state | wc -l"), "cwd": .string("node://\(id)/skills/team")])
        #expect(ok["payload"]?["stdout"] == .string(team + "\n0\n"), "\(ok)")
    }

    @Test func theMappedDirectoryMeetsTheExecPolicyAsThePathWould() throws {
        let r = try Rig(system: "security: 'deny'"); defer { r.stop() }
        let dir = try Self.addSkill(r.node.dir + "/state/skills", "notes")
        let id = try Self.nodeId(r)
        let byLocator = try r.run(["command": Self.argv("pwd"), "cwd": .string("node://\(id)/skills/notes")])
        let byPath = try r.run(["command": Self.argv("pwd"), "cwd": .string(dir)])
        #expect(byPath["ok"] == false && byLocator["error"] == byPath["error"], "\(byLocator) vs \(byPath)")
    }
}
