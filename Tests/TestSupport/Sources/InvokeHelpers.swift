@testable import Config
import Foundation
@testable import GatewaySession
@testable import HostPresence
@testable import Kit
@testable import NodeCLI
@testable import Registry
@testable import Store
@testable import Support

/// Test conveniences over the one dispatch path (CommandSpec.prepare → handler).
extension Dispatcher {
    /// Params as JSON text, as a gateway's `paramsJSON` carries them; a gateway's default payload limit.
    func invoke(id: String, command: String, params: Data?, timeoutMs: Int?) async -> Result<JSONValue, NodeError> {
        await invoke(id: id, command: command, params: InvokeParams(text: params.map { String(decoding: $0, as: UTF8.self) }),
                     timeoutMs: timeoutMs, maxPayloadBytes: GatewayProtocol.defaultMaxPayload)
    }
}

extension CommandSpec {
    /// Decodes and validates params text through this row, without running the handler.
    func check(_ json: String) throws(NodeError) {
        guard let prepare else { throw NodeError.invalidRequest("\(name) has no handler") }
        _ = try prepare(InvokeParams(text: json))
    }

    /// The prepared call, for a row that has a handler.
    func prepared(_ params: InvokeParams) throws(NodeError) -> Call {
        guard let prepare else { throw NodeError.invalidRequest("\(name) has no handler") }
        return try prepare(params)
    }
}

/// Runs `command` of `capability` through its row's decoder and handler, as the dispatcher does
/// after its gates.
func runCommand(_ capability: any Capability, _ command: String, _ params: String = "{}",
                deadline: ContinuousClock.Instant? = nil, maxPayloadBytes: Int = 1 << 20) async throws(NodeError) -> JSONValue {
    guard let spec = capability.commands.first(where: { $0.name == command }) else {
        throw NodeError.invalidRequest("no row for \(command)")
    }
    let context = InvocationContext(invokeId: "t-\(UUID().uuidString.prefix(6))", command: command, deadline: deadline,
                                    maxPayloadBytes: maxPayloadBytes)
    return try await spec.prepared(InvokeParams(text: params))(context)
}
