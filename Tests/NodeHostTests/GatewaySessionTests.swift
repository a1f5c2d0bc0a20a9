@testable import Config
import Foundation
@testable import GatewaySession
@testable import HostPresence
@testable import Kit
@testable import NodeCLI
@testable import Registry
@testable import Store
@testable import Support
@testable import TestSupport
import Testing

/// GatewayClient in-process, with slow and large test commands, against the test gateway.
@Suite(.serialized) struct GatewaySessionTests {
    struct Harness {
        let gw: TestGateway
        let client: GatewayClient
        let task: Task<Void, Never>
        let gate = GateTestCapability()
        let dir: String

        init(gatewayArgs: [String] = ["--auto-approve"]) async throws {
            dir = TestPaths.tempDir("sess")
            gw = try TestGateway(stateFile: dir + "/gw.json", args: gatewayArgs)
            let store = try StateStore(stateDir: dir + "/state")
            let registry = await CommandRegistry.load([gate], enabled: { _ in true })
            let presence = PresenceMonitor(mode: .always, source: FixedPresenceSource(.foreground, reason: "test"))
            var config = NodeConfig(environment: ["HOME": dir])
            config.gateway.url = gw.url
            config.stateDir = dir + "/state"
            let c = try GatewayClient(config: config, store: store, identity: try store.identity(),
                                      dispatcher: Dispatcher(registry: registry, presence: presence), deviceInfo: [:])
            client = c
            task = Task { await c.run() }
        }

        /// Waits until `n` gate.sleep invokes run in the node (they came through the gateway,
        /// which takes its own time on a busy machine); false after 30 s.
        func running(_ n: Int) async -> Bool { await gate.sleeping.reach(n) }

        func stop() async {
            await client.stop()
            await task.value
            gw.stop()
            try? FileManager.default.removeItem(atPath: dir)
        }
    }

    @Test func lateResultsAreDropped() async throws {
        let h = try await Harness()
        _ = try #require(h.gw.waitFor("hello"))
        let r = h.gw.invoke("gate.sleep", id: "late-1", paramsJSON: #"{"ms":1500,"ignoreCancel":true}"#, timeoutMs: 300, wait: 3)
        #expect(r == nil)
        // The connection is still fine afterwards.
        #expect(h.gw.invoke("gate.echo", paramsJSON: #"{"text":"hi"}"#)?["payload"]?["text"] == "hi")
        await h.stop()
    }

    @Test func cancelEventStopsTheInvoke() async throws {
        let h = try await Harness()
        _ = try #require(h.gw.waitFor("hello"))
        h.gw.command(["cmd": "invoke", "id": "c-1", "command": "gate.sleep", "paramsJSON": #"{"ms":20000}"#])
        #expect(await h.running(1))
        h.gw.command(["cmd": "cancel", "id": "c-1"])
        let r = try #require(h.gw.waitFor("invoke_result", timeout: 5) { $0["id"] == "c-1" })
        #expect(r["ok"] == false)
        #expect(r["error"]?["code"] == "CANCELLED")
        await h.stop()
    }

    @Test func oversizedResultBecomesPayloadTooLarge() async throws {
        let h = try await Harness(gatewayArgs: ["--auto-approve", "--max-payload", "100000"])
        _ = try #require(h.gw.waitFor("hello"))
        let ok = try #require(h.gw.invoke("gate.big", paramsJSON: #"{"bytes":50000}"#))
        #expect(ok["ok"] == true)
        let big = try #require(h.gw.invoke("gate.big", paramsJSON: #"{"bytes":200000}"#))
        #expect(big["ok"] == false)
        #expect(big["error"]?["code"] == "PAYLOAD_TOO_LARGE")
        #expect(h.gw.schemaErrors.isEmpty)
        await h.stop()
    }

    @Test func ninthConcurrentInvokeIsBusy() async throws {
        let h = try await Harness()
        _ = try #require(h.gw.waitFor("hello"))
        // Long enough that none ends before the ninth arrives, however slow the machine.
        for i in 0..<8 { h.gw.command(["cmd": "invoke", "id": .string("s-\(i)"), "command": "gate.sleep", "paramsJSON": #"{"ms":6000}"#]) }
        #expect(await h.running(8))
        let busy = try #require(h.gw.invoke("gate.echo", id: "s-9", paramsJSON: #"{"text":"x"}"#))
        #expect(busy["error"]?["code"] == "NODE_BUSY")
        for i in 0..<8 { #expect(h.gw.waitFor("invoke_result", timeout: 30) { $0["id"] == .string("s-\(i)") }?["ok"] == true) }
        await h.stop()
    }
}
