@testable import Config
import Foundation
@testable import Kit
@testable import Support
@testable import TestSupport
import Testing

/// SIGHUP (`systemctl reload`) on the real daemon, against the test gateway and a stand-in
/// systemd notify socket: what changes is applied, what does not keeps running, a broken config
/// is refused, and the gateway session is renewed only when the node's command list changed.
@Suite(.serialized) struct ConfigReloadTests {
    @Test func reloadStartsRestartsAndRefusesWithoutLosingTheNode() throws {
        let gw = try TestGateway(stateFile: TestPaths.tempDir("gw") + "/gw.json", args: ["--auto-approve"]); defer { gw.stop() }
        let section = "url: '\(gw.url)'"
        let plugins = "plugins: { dirs: ['\(TestPaths.repoRoot)/Plugins'], entries: { %@ } }"
        let n = NodeUnderTest(gatewaySection: section, extra: plugins.replacingOccurrences(of: "%@", with: ""))
        defer { n.cleanup() }
        let notify = try ServiceNotifyTests.NotifySocket(path: n.dir + "/notify.sock")
        n.extraEnv = ["NOTIFY_SOCKET": notify.path]
        try n.start()
        _ = try #require(gw.waitFor("connect"), "\(n.log)")
        let first = try #require(gw.waitFor("hello"), "\(n.log)")
        #expect(first["issuedToken"] == true)
        _ = notify.collect(for: 0.5)
        func hup() { kill(n.process!.pid, SIGHUP) }

        // 1. A plugin enabled: started, and the node reconnects at once to declare sensors.read,
        //    with the device token it was given (no second pairing).
        n.rewriteConfig(gatewaySection: section, extra: plugins.replacingOccurrences(of: "%@", with: "sensors: { enabled: true }"))
        hup()
        let second = try #require(gw.waitFor("connect", timeout: 10) { $0["commands"]?.arrayValue?.contains("sensors.read") == true }, "\(n.log)")
        #expect(second["auth"]?.arrayValue?.contains("deviceToken") == true, "\(second)")
        #expect(n.log.contains("config reloaded: started sensors"), "\(n.log)")
        let sent = notify.collect(for: 1.0)
        #expect(sent.contains { $0.contains("RELOADING=1") } && sent.contains { $0.contains("READY=1") }, "\(sent)")
        let read = try #require(gw.invoke("sensors.read"), "\(n.log)")
        #expect(read["error"]?["code"] != "INVALID_REQUEST", "\(read)")
        #expect(gw.all("pairing_requested").count <= 1)

        // 2. The plugin's config changed, its commands did not: restarted, same session.
        let connects = gw.all("connect").count
        n.rewriteConfig(gatewaySection: section, extra: plugins.replacingOccurrences(of: "%@", with: "sensors: { enabled: true, config: { note: 'changed' } }"))
        hup()
        #expect(waitUntil(timeout: 10) { n.log.contains("config reloaded: restarted sensors") }, "\(n.log)")
        Thread.sleep(forTimeInterval: 1.0)
        #expect(gw.all("connect").count == connects, "the session was renewed for a change the gateway cannot see")
        #expect(gw.invoke("sensors.read")?["error"]?["code"] != "INVALID_REQUEST")

        // 3. A broken file: refused with its position, the running config kept.
        _ = FileManager.default.createFile(atPath: n.configPath, contents: Data("{ gateway: { url: ".utf8))
        hup()
        #expect(waitUntil(timeout: 10) { n.log.contains("config reload failed, keeping the running config") }, "\(n.log)")
        #expect(n.log.contains("config.json5:1:"), "\(n.log)")
        #expect(n.isRunning)
        #expect(gw.all("connect").count == connects)
        #expect(gw.invoke("sensors.read")?["error"]?["code"] != "INVALID_REQUEST")

        // 4. The plugin disabled again: stopped, and gone from the next connect.
        n.rewriteConfig(gatewaySection: section, extra: plugins.replacingOccurrences(of: "%@", with: ""))
        hup()
        let third = try #require(gw.waitFor("connect", timeout: 10) { $0["commands"]?.arrayValue?.contains("sensors.read") == false }, "\(n.log)")
        #expect(third["auth"]?.arrayValue?.contains("deviceToken") == true)
        #expect(n.log.contains("config reloaded: stopped sensors"), "\(n.log)")

        // 5. A drop-in (config.d/ beside the file) enables it again: read on reload like the main file.
        let dropIns = PathName.directory(n.configPath) + "/config.d"
        try FileManager.default.createDirectory(atPath: dropIns, withIntermediateDirectories: true)
        try "{ plugins: { entries: { sensors: { enabled: true } } } }".write(toFile: dropIns + "/50-sensors.json5", atomically: true, encoding: .utf8)
        hup()
        _ = try #require(gw.waitFor("connect", timeout: 10) { $0["commands"]?.arrayValue?.contains("sensors.read") == true }, "\(n.log)")
        #expect(n.log.contains("config reloaded: started sensors"), "\(n.log)")
        #expect(gw.schemaErrors.isEmpty)
        #expect(n.stop() == 0)
    }
}
