import Foundation
@testable import Support
@testable import SystemCapability
@testable import TestSupport
import Testing

/// system.run.prepare with `installedApp` (the gateway's app_launch flow), through the daemon and
/// the test gateway: the plan is bound to the app's current revision and carries it; a stale
/// revision or another command is refused.
@Suite(.serialized) struct InstalledAppPlanTests {
    @Test func aPlanIsBoundToTheAppsCurrentRevision() throws {
        let dir = TestPaths.tempDir("xdg-plan")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let apps = dir + "/share/applications"
        try FileManager.default.createDirectory(atPath: apps, withIntermediateDirectories: true)
        let prog = dir + "/prog"
        try FileManager.default.copyItem(atPath: try #require(Subprocess.findExecutable("true")), toPath: prog)
        _ = FileManager.default.createFile(atPath: apps + "/tool.desktop", contents: Data("[Desktop Entry]\nType=Application\nName=Tool\nExec=\(prog)\n".utf8))
        let env = ["XDG_DATA_HOME": dir + "/home", "XDG_DATA_DIRS": dir + "/share"]
        let entry = try #require(DesktopEntries.load(env.merging(["PATH": "/usr/bin:/bin"]) { a, _ in a }, locale: nil).entries.first)

        let gw = try TestGateway(stateFile: TestPaths.tempDir("gw") + "/gw.json", args: ["--auto-approve"]); defer { gw.stop() }
        let node = NodeUnderTest(gatewayURL: gw.url, extra: "capabilities: { system: { enabled: true } }")
        for (k, v) in env { node.extraEnv[k] = v }
        try node.start(); defer { node.cleanup() }
        guard gw.waitFor("hello") != nil else { throw TestFailure("no hello: \(node.log)") }
        func prepare(_ revision: String, _ command: String) throws -> JSONValue {
            let params: JSONValue = ["command": [.string(command)],
                                     "installedApp": ["appId": .string(entry.appId), "appRevision": .string(revision)]]
            return try #require(gw.invoke("system.run.prepare", paramsJSON: params.jsonString(), timeoutMs: 10_000), "\(node.log.suffix(2000))")
        }

        let ok = try prepare(entry.appRevision, entry.executable)
        #expect(ok["ok"] == true, "\(ok)")
        #expect(ok["payload"]?["plan"]?["installedApp"] == ["appId": .string(entry.appId), "appRevision": .string(entry.appRevision)], "\(ok)")
        #expect(ok["payload"]?["plan"]?["argv"] == [.string(entry.executable)])

        let stale = try prepare(String(repeating: "0", count: 64), entry.executable)
        #expect(stale["ok"] == false && stale["error"]?["code"] == "INSTALLED_APP_CHANGED", "\(stale)")
        #expect(stale["error"]?["message"] == "INSTALLED_APP_CHANGED: refresh inventory before approval")
        let other = try prepare(entry.appRevision, "/bin/sh")
        #expect(other["ok"] == false && other["error"]?["code"] == "INVALID_REQUEST", "\(other)")
        #expect(gw.schemaErrors.isEmpty, "\(gw.schemaErrors)")
    }
}
