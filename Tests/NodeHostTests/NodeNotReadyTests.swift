import Foundation
@testable import Kit
@testable import Registry
@testable import Support
@testable import TestSupport
import Testing

/// NODE_NOT_READY means "refused before doing anything" (the gateway may retry it elsewhere): the
/// dispatcher answers it only for invokes that arrive once the node is stopping, never for one that
/// already runs (that one answers CANCELLED).
@Suite struct NodeNotReadyTests {
    @Test func onlyInvokesArrivingAfterTheStopAreNotReady() async {
        let gate = GateTestCapability()
        let (d, _) = await makeDispatcher(gate: gate)
        let running = Task { await d.invoke(id: "old", command: "gate.sleep", params: params(#"{"ms":60000}"#), timeoutMs: nil) }
        #expect(await gate.sleeping.reach(1), "the handler started")
        await d.cancelAll("the node is stopping")
        guard case .failure(let old) = await running.value else { Issue.record("expected a cancel"); return }
        #expect(old.code == .cancelled, "\(old.message)")
        guard case .failure(let late) = await d.invoke(id: "new", command: "gate.echo", params: params(#"{"text":"x"}"#), timeoutMs: nil) else {
            Issue.record("a stopping node ran a new invoke"); return
        }
        #expect(late.code == .nodeNotReady && late.retryable, "\(late.message)")
    }
}

/// A cancel that comes right behind its request, before the invoke's task reached the dispatcher,
/// is not lost: the invoke answers CANCELLED without running.
@Suite struct EarlyCancelTests {
    @Test func aCancelBeforeTheStartIsKeptForTheInvoke() async {
        let (d, _) = await makeDispatcher()
        await d.cancel(id: "soon", arrived: true)
        guard case .failure(let e) = await d.invoke(id: "soon", command: "gate.echo", params: params(#"{"text":"x"}"#), timeoutMs: nil) else {
            Issue.record("ran after its cancel"); return
        }
        #expect(e.code == .cancelled, "\(e.message)")
        // Used once: the same id later runs, and a cancel for an invoke nobody announced is dropped.
        #expect((try? await d.invoke(id: "soon", command: "gate.echo", params: params(#"{"text":"x"}"#), timeoutMs: nil).get()) != nil)
        await d.cancel(id: "never")
        #expect((try? await d.invoke(id: "never", command: "gate.echo", params: params(#"{"text":"x"}"#), timeoutMs: nil).get()) != nil)
    }
}
