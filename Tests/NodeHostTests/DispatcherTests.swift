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

/// A capability made for exercising the dispatcher's gates.
struct GateTestCapability: Capability {
    struct SleepParams: CommandParams {
        var ms: Int?
        var ignoreCancel: Bool?
    }
    struct EchoParams: CommandParams { var text: String; var count: Int? }
    struct BigParams: CommandParams { var bytes: Int }

    static func required(_ f: ConfigField) -> ConfigField { var f = f; f.required = true; return f }

    var name = "gate"
    var avail: Availability = .available
    /// gate.sleep invokes whose handler has started: what a test waits for before it acts on them.
    let sleeping = EventCount()
    var manifest: BundleManifest {
        BundleManifest(name: name, summary: "dispatcher gates", enabledByDefault: true, library: nil, commands: [
            .init(name: "gate.echo", summary: "echo", params: [Self.required(ConfigField("text", .string, "echoed")),
                                                                ConfigField("count", .integer(-1_000_000...1_000_000), "a number")]),
            .init(name: "gate.fg", summary: "fg only", requiresForeground: true),
            .init(name: "gate.sleep", summary: "sleep", params: [ConfigField("ms", .integer(0...60_000), "how long"),
                                                                  ConfigField("ignoreCancel", .bool, "sleep through a cancel")]),
            .init(name: "gate.big", summary: "large payload", params: [Self.required(ConfigField("bytes", .integer(0...(1 << 30)), "how many"))]),
        ], file: "test")
    }
    var handlers: [CommandHandler] {
        [CommandHandler("gate.echo", params: EchoParams.self) { p, _ -> JSONValue in
             ["text": .string(p.text), "count": .number(Double(p.count ?? 1))]
         },
         CommandHandler("gate.fg", params: NoParams.self) { _, _ -> JSONValue in
             ["ran": true]
         },
         CommandHandler("gate.sleep", params: SleepParams.self) { [sleeping] p, _ throws(NodeError) -> JSONValue in
             sleeping.add()
             if p.ignoreCancel == true {
                 // Waits without looking at cancellation (and without blocking a pool thread).
                 await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                     DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(p.ms ?? 0)) { c.resume() }
                 }
                 return ["slept": true]
             }
             do { try await Task.sleep(for: .milliseconds(p.ms ?? 0)) } catch { throw NodeError(.cancelled, "stopped") }
             return ["slept": true]
         },
         CommandHandler("gate.big", params: BigParams.self) { p, _ -> JSONValue in
             ["data": .string(String(repeating: "z", count: p.bytes))]
         }]
    }
    func availability() async -> Availability { avail }
}

func makeDispatcher(enabled: Bool = true, avail: Availability = .available, presence: Presence = .foreground,
                    maxInFlight: Int = 8, gate: GateTestCapability? = nil) async -> (Dispatcher, PresenceMonitor) {
    let monitor = PresenceMonitor(mode: .manual, source: FixedPresenceSource(presence, reason: "test"))
    let registry = await CommandRegistry.load([gate ?? GateTestCapability(avail: avail)], enabled: { _ in enabled })
    return (Dispatcher(registry: registry, presence: monitor, maxInFlight: maxInFlight), monitor)
}

func params(_ s: String) -> Data { Data(s.utf8) }

@Suite struct DispatcherTests {
    @Test func unknownCommandIsInvalidRequest() async {
        let (d, _) = await makeDispatcher()
        let r = await d.invoke(id: "1", command: "nope.nope", params: nil, timeoutMs: nil)
        guard case .failure(let e) = r else { Issue.record("expected failure"); return }
        #expect(e.code == "INVALID_REQUEST")
        #expect(e.message.hasPrefix("INVALID_REQUEST: unknown command"))
    }

    @Test func disabledCapabilityHasItsOwnCode() async {
        let (d, _) = await makeDispatcher(enabled: false)
        let r = await d.invoke(id: "1", command: "gate.echo", params: params(#"{"text":"x"}"#), timeoutMs: nil)
        guard case .failure(let e) = r else { Issue.record("expected failure"); return }
        #expect(e.code == "GATE_DISABLED")
        #expect(e.message.contains("capabilities.gate.enabled"))
    }

    @Test func unavailableCapabilityIsNotAdvertisedAndRefused() async {
        let (d, _) = await makeDispatcher(avail: .unavailable("no hardware"))
        #expect(d.registry.manifest.commands.isEmpty)
        #expect(d.registry.notAdvertisedReasons == ["gate: no hardware"])
        let r = await d.invoke(id: "1", command: "gate.echo", params: params(#"{"text":"x"}"#), timeoutMs: nil)
        guard case .failure(let e) = r else { Issue.record("expected failure"); return }
        #expect(e.code == "GATE_UNAVAILABLE")
        #expect(e.message == "GATE_UNAVAILABLE: no hardware")
    }

    @Test func foregroundOnlyCommandRefusedInBackground() async {
        let (d, monitor) = await makeDispatcher(presence: .background)
        let r = await d.invoke(id: "1", command: "gate.fg", params: nil, timeoutMs: nil)
        guard case .failure(let e) = r else { Issue.record("expected failure"); return }
        #expect(e.code == "NODE_BACKGROUND_UNAVAILABLE")
        #expect(e.message.hasPrefix("NODE_BACKGROUND_UNAVAILABLE: "))
        // Commands that don't need a person still run in the background.
        let ok = await d.invoke(id: "2", command: "gate.echo", params: params(#"{"text":"x"}"#), timeoutMs: nil)
        #expect((try? ok.get())?["text"] == "x")
        // …and the foreground one runs once someone is there.
        await monitor.setOverride(.foreground)
        let fg = await d.invoke(id: "3", command: "gate.fg", params: nil, timeoutMs: nil)
        #expect((try? fg.get()) == ["ran": true])
    }

    @Test func backgroundGateComesBeforeParams() async {
        let (d, _) = await makeDispatcher(presence: .background)
        let r = await d.invoke(id: "1", command: "gate.fg", params: params("not json"), timeoutMs: nil)
        guard case .failure(let e) = r else { Issue.record("expected failure"); return }
        #expect(e.code == "NODE_BACKGROUND_UNAVAILABLE")
    }

    @Test(arguments: [
        (#"{"count":1}"#, "text required"),
        (#"{"text":5}"#, "text: expected a string"),
        (#"{"text":"a","count":"many"}"#, "count: expected an integer, found a string (\"many\")"),
        (#"{"text":"a","count":1.5}"#, "count: expected an integer, found 1.5"),
        ("[1,2]", "params must be a JSON object, found an array"),
        (#"{"text":null}"#, "text required"),
        ("{nope", "params are not valid JSON"),
    ])
    func badParamsNameTheField(input: String, expected: String) async {
        let (d, _) = await makeDispatcher()
        let r = await d.invoke(id: "1", command: "gate.echo", params: params(input), timeoutMs: nil)
        guard case .failure(let e) = r else { Issue.record("expected failure for \(input)"); return }
        #expect(e.code == "INVALID_REQUEST")
        #expect(e.message.contains(expected), "\(e.message)")
    }

    @Test func rangeCheckNamesField() async {
        let (d, _) = await makeDispatcher()
        let r = await d.invoke(id: "1", command: "gate.sleep", params: params(#"{"ms":-5}"#), timeoutMs: nil)
        guard case .failure(let e) = r else { Issue.record("expected failure"); return }
        #expect(e.message == "INVALID_REQUEST: ms must be between 0 and 60000 (got -5)")
    }

    @Test(arguments: [nil, "", "null", "{}", "  null  "])
    func absentParamsMeanEmpty(input: String?) async {
        let (d, _) = await makeDispatcher()
        let r = await d.invoke(id: "1", command: "gate.sleep", params: input.map { params($0) }, timeoutMs: nil)
        #expect((try? r.get()) == ["slept": true])
    }

    @Test func deadlineCancelsTheHandler() async {
        let (d, _) = await makeDispatcher()
        let start = ContinuousClock.now
        let r = await d.invoke(id: "1", command: "gate.sleep", params: params(#"{"ms":20000}"#), timeoutMs: 100)
        guard case .failure(let e) = r else { Issue.record("expected timeout"); return }
        #expect(e.code == "TIMEOUT")
        #expect(ContinuousClock.now - start < .seconds(5))
        #expect(await d.inFlightCount == 0)
    }

    @Test func deadlineAnswersEvenWhenHandlerIgnoresCancellation() async {
        let (d, _) = await makeDispatcher()
        let r = await d.invoke(id: "1", command: "gate.sleep", params: params(#"{"ms":1500,"ignoreCancel":true}"#), timeoutMs: 100)
        guard case .failure(let e) = r else { Issue.record("expected timeout"); return }
        #expect(e.code == "TIMEOUT")
    }

    @Test func inFlightLimitGivesRetryableBusy() async {
        let gate = GateTestCapability()
        let (d, _) = await makeDispatcher(maxInFlight: 8, gate: gate)
        await withTaskGroup(of: Void.self) { group in
            for i in 0..<8 {
                group.addTask { _ = await d.invoke(id: "s\(i)", command: "gate.sleep", params: params(#"{"ms":30000}"#), timeoutMs: nil) }  // cancelled below
            }
            // Wait until all eight are running.
            #expect(await gate.sleeping.reach(8), "the handlers started")
            #expect(await d.inFlightCount == 8)
            let r = await d.invoke(id: "extra", command: "gate.echo", params: params(#"{"text":"x"}"#), timeoutMs: nil)
            guard case .failure(let e) = r else { Issue.record("expected busy"); return }
            #expect(e.code == "NODE_BUSY")
            #expect(e.retryable)
            for i in 0..<8 { await d.cancel(id: "s\(i)") }
        }
        #expect(await d.inFlightCount == 0)
        let after = await d.invoke(id: "later", command: "gate.echo", params: params(#"{"text":"y"}"#), timeoutMs: nil)
        #expect((try? after.get())?["text"] == "y")
    }

    @Test func duplicateActiveIdRejected() async {
        let gate = GateTestCapability()
        let (d, _) = await makeDispatcher(gate: gate)
        async let first = d.invoke(id: "same", command: "gate.sleep", params: params(#"{"ms":30000}"#), timeoutMs: nil)  // cancelled below
        #expect(await gate.sleeping.reach(1), "the handlers started")
        let second = await d.invoke(id: "same", command: "gate.echo", params: params(#"{"text":"x"}"#), timeoutMs: nil)
        guard case .failure(let e) = second else { Issue.record("expected duplicate refusal"); return }
        #expect(e.message.contains("duplicate"))
        await d.cancel(id: "same")
        guard case .failure(let c) = await first else { Issue.record("expected cancel"); return }
        #expect(c.code == "CANCELLED")
    }

    /// The caller stops waiting (its gateway connection ended and cancelled its task): the invoke
    /// answers CANCELLED at once and its work is cancelled, not left to run out its deadline.
    @Test func cancellingTheCallerCancelsTheInvoke() async {
        let gate = GateTestCapability()
        let (d, _) = await makeDispatcher(gate: gate)
        let caller = Task { await d.invoke(id: "gone", command: "gate.sleep", params: params(#"{"ms":60000}"#), timeoutMs: nil) }
        #expect(await gate.sleeping.reach(1), "the handlers started")
        let asked = ContinuousClock.now
        caller.cancel()
        guard case .failure(let e) = await caller.value else { Issue.record("expected a cancel"); return }
        #expect(e.code == "CANCELLED" && e.message.contains("gateway connection"), "\(e.message)")
        #expect(ContinuousClock.now - asked < .seconds(5))
        #expect(await d.inFlightCount == 0)
    }

    /// SIGTERM's first step: every running invoke answers CANCELLED with the reason.
    @Test func cancelAllEndsEveryRunningInvoke() async {
        let gate = GateTestCapability()
        let (d, _) = await makeDispatcher(gate: gate)
        let running = (0..<3).map { i in
            Task { await d.invoke(id: "r\(i)", command: "gate.sleep", params: params(#"{"ms":60000}"#), timeoutMs: nil) }
        }
        #expect(await gate.sleeping.reach(3), "the handlers started")
        #expect(await d.inFlightCount == 3)
        await d.cancelAll("the node is stopping")
        for t in running {
            guard case .failure(let e) = await t.value else { Issue.record("expected a cancel"); continue }
            #expect(e.code == "CANCELLED" && e.message == "CANCELLED: the node is stopping", "\(e.message)")
        }
        #expect(await d.inFlightCount == 0)
    }

    @Test func manifestDerivedFromTable() async {
        let (d, _) = await makeDispatcher()
        let m = d.registry.manifest
        #expect(m.caps == ["gate"])
        #expect(m.commands == ["gate.echo", "gate.fg", "gate.sleep", "gate.big"])
    }
}
