@testable import Config
import Foundation
@testable import HostPresence
@testable import Kit
@testable import NodeCLI
@testable import Registry
@testable import Store
@testable import Support
@testable import TestSupport
import Testing

/// system.notify (Plugins/system-notify) against a notification daemon on a private bus, invoked
/// through the test gateway and the real binary.
@Suite(.serialized) struct NotifyPluginTests {
    func node(_ gw: TestGateway) -> NodeUnderTest {
        NodeUnderTest(gatewayURL: gw.url, extra: "plugins: { dirs: ['\(TestPaths.repoRoot)/Plugins'], entries: { 'system-notify': { enabled: true } } }")
    }

    @Test func notifyReachesTheNotificationDaemonThroughTheGateway() throws {
        let bus = try PrivateBus(); defer { bus.stop() }
        let daemon = try PythonServer(script: "fake_notifyd.py", args: [bus.address]); defer { daemon.stop() }
        let gw = try TestGateway(stateFile: TestPaths.tempDir("gw") + "/gw.json", args: ["--auto-approve"]); defer { gw.stop() }
        let n = node(gw); defer { n.cleanup() }
        var env = n.env
        env["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        let p = try BackgroundProcess(TestPaths.nodeBinary, ["run", "--config", n.configPath], env: env)
        defer { p.stop() }
        let hello = try #require(gw.waitFor("connect"), "\(p.log)")
        #expect(hello["commands"]?.arrayValue?.contains("system.notify") == true)
        #expect(hello["caps"]?.arrayValue?.contains("notify") == true)
        let r = try #require(gw.invoke("system.notify", paramsJSON: #"{"title":"Hello","body":"from the node","priority":"timeSensitive","sound":false}"#), "\(p.log)")
        #expect(r["ok"] == true, "\(r)\n\(p.log)")
        #expect(r["payload"]?["sent"] == true)
        let seen = try #require(daemon.nextLine(timeout: 5).flatMap { JSONValue.parse($0) })
        #expect(seen["notify"]?["summary"] == "Hello")
        #expect(seen["notify"]?["body"] == "from the node")
        #expect(seen["notify"]?["urgency"] == 2)
        #expect(seen["notify"]?["suppressSound"] == true)
        let bad = try #require(gw.invoke("system.notify", paramsJSON: #"{"body":"no title"}"#))
        #expect(bad["error"]?["code"] == "INVALID_REQUEST")
        #expect(gw.schemaErrors.isEmpty)
    }

    @Test func noNotificationDaemonIsNotifyUnavailableWithAHint() throws {
        let bus = try PrivateBus(); defer { bus.stop() }
        let e = CLIEnv("plugins: { dirs: ['\(TestPaths.repoRoot)/Plugins'], entries: { 'system-notify': { enabled: true } } }")
        defer { e.cleanup() }
        var env = e.vars
        env["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        let r = try runProcess(TestPaths.nodeBinary, ["invoke", "system.notify", "--params", #"{"title":"x"}"#, "--config", e.config], env: env)
        #expect(r.code == 1)
        let v = try #require(JSONValue.parse(r.stdout), "\(r.stdout)\(r.stderr)")
        #expect(v["code"] == "NOTIFY_UNAVAILABLE")
        #expect(v["message"]?.stringValue?.contains("notification daemon") == true)
    }
}
