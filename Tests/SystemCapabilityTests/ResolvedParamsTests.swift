@testable import Kit
@testable import Support
@testable import SystemCapability
import Testing

/// Params are resolved once, in the params type: what a handler reads has its default filled in
/// (and a generated id is generated once), whatever the wire left out.
struct ResolvedParamsTests {
    func decode<P: CommandParams>(_ type: P.Type, _ params: JSONValue) throws -> P {
        try P.decodeValidated(from: .value(params))
    }

    @Test func aRunIdIsMadeOnceWhenTheGatewaySendsNone() throws {
        let run = try decode(SystemRunParams.self, ["command": ["true"]])
        #expect(!run.effectiveRunId.isEmpty && run.effectiveRunId == run.effectiveRunId)
        #expect(run.effectiveSessionKey == "node" && run.effectiveAgent == "main" && run.programTimeout == nil)
        let named = try decode(SystemRunParams.self, ["command": ["true"], "runId": "r1", "timeoutMs": 50])
        #expect(named.effectiveRunId == "r1" && named.programTimeout == .milliseconds(50))
        // The resolved field is not a wire field.
        #expect(throws: NodeError.self) { try decode(SystemRunParams.self, ["command": []]) }
    }
}
