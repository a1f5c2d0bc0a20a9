@testable import Kit
@testable import Support
@testable import SystemCapability
import Testing

/// Params are resolved once, from the manifest row, before the handler runs: what a handler reads
/// has its default filled in (and a generated id is generated once), whatever the wire left out.
struct ResolvedParamsTests {
    func decode<P: CommandParams>(_ type: P.Type, _ params: JSONValue) throws -> P {
        try P.decode(.value(params), command: "system.run")
    }

    @Test func aRunIdIsMadeOnceWhenTheGatewaySendsNone() throws {
        let run = try decode(SystemRunParams.self, ["command": ["true"]])
        #expect(!run.resolvedRunId.isEmpty && run.resolvedRunId == run.resolvedRunId)
        #expect(run.sessionKey == "node" && run.approvalAgent == "main" && run.agentId == nil && run.programTimeout == nil)
        let named = try decode(SystemRunParams.self, ["command": ["true"], "runId": "r1", "timeoutMs": 50])
        #expect(named.resolvedRunId == "r1" && named.programTimeout == .milliseconds(50))
        // The resolved field is not a wire field.
        #expect(throws: NodeError.self) { try decode(SystemRunParams.self, ["command": []]) }
        #expect(throws: NodeError.self) { try decode(SystemRunParams.self, ["command": ["true"], "timeoutMs": -1]) }
        #expect(throws: NodeError.self) { try decode(SystemRunParams.self, ["command": ["true"], "approvalDecision": "sure"]) }
    }
}
