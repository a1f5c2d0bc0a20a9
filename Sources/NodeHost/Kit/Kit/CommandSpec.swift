import Config
import FoundationEssentials
import Glibc
import Support

/// One row of the command table: everything the gateway manifest, the dispatcher's gates,
/// `openclaw-node caps`, the docs and doctor's allowlist snippet need to know about a command.
public struct CommandSpec: Sendable {
    public let name: String
    /// The capability (connect `caps` entry and config section) this command belongs to.
    public let capability: String
    /// Refused with NODE_BACKGROUND_UNAVAILABLE while nobody is at the device.
    public let requiresForeground: Bool
    /// Listed in the gateway's dangerous set: needs an explicit gateway allow entry.
    public let dangerous: Bool
    /// The `permissions` key this command needs (e.g. "camera.capture"), if any.
    public let permission: String?
    /// Human description of the params, for `caps` and docs: [(name, type and meaning)].
    public let paramsDoc: [(String, String)]
    public let summary: String
    /// Decodes and validates the params into the command's typed params struct and binds them to
    /// the handler: the call the dispatcher runs under its deadline. There is no second dispatch
    /// on the command name and no cast of the params.
    public let prepare: @Sendable (InvokeParams) throws(NodeError) -> Call

    /// One prepared invoke.
    public typealias Call = @Sendable (InvocationContext) async throws(NodeError) -> JSONValue

    public init<P: CommandParams>(_ name: String, capability: String, params: P.Type,
                                  requiresForeground: Bool = false, dangerous: Bool = false,
                                  permission: String? = nil, summary: String,
                                  paramsDoc: [(String, String)] = [],
                                  handler: @escaping @Sendable (P, InvocationContext) async throws(NodeError) -> JSONValue) {
        self.name = name
        self.capability = capability
        self.requiresForeground = requiresForeground
        self.dangerous = dangerous
        self.permission = permission
        self.summary = summary
        self.paramsDoc = paramsDoc
        self.prepare = { (params: InvokeParams) throws(NodeError) -> Call in
            let p = try P.decodeValidated(from: params)
            return { (context: InvocationContext) async throws(NodeError) -> JSONValue in try await handler(p, context) }
        }
    }
}

/// Typed params of one command. Fields are optional and named exactly as on the wire; defaults and
/// clamping live in `validated()`, next to the struct, not in handlers.
public protocol CommandParams: Decodable, Sendable {
    /// Checks ranges and applies defaults; throws INVALID_REQUEST naming the field.
    func validated() throws(NodeError) -> Self
}

extension CommandParams {
    public func validated() throws(NodeError) -> Self { self }

    static func decodeValidated(from params: InvokeParams) throws(NodeError) -> Self {
        // Absent params, `null` and "" all mean "no params" (the gateway sends paramsJSON: null).
        let tree: JSONValue
        switch params {
        case .none, .value(.null): tree = .object([:])
        case .value(let v): tree = v
        case .unparsable: throw NodeError.invalidRequest("params are not valid JSON")
        }
        let value: Self
        do { value = try JSONValueDecoder.decode(Self.self, from: tree) }
        catch { throw NodeError.invalidRequest(error.description) }
        return try value.validated()
    }
}

/// Commands that take no params still accept (and ignore) any object.
public struct NoParams: CommandParams {
    public init() {}
    /// Still insists on an object, so `[1]` is refused as for every other command.
    public init(from decoder: Decoder) throws { _ = try decoder.container(keyedBy: PathKey.self) }
}

/// Helpers for `validated()` implementations: one place for range messages.
public enum ParamCheck {
    public static func range<T: Comparable & Sendable>(_ value: T?, _ name: String, _ range: ClosedRange<T>) throws(NodeError) {
        guard let v = value else { return }
        guard range.contains(v) else {
            throw NodeError.invalidRequest("\(name) must be between \(range.lowerBound) and \(range.upperBound) (got \(v))")
        }
    }

    public static func oneOf(_ value: String?, _ name: String, _ allowed: [String]) throws(NodeError) {
        guard let v = value else { return }
        guard allowed.contains(v) else {
            throw NodeError.invalidRequest("\(name) must be one of \(allowed.joined(separator: ", ")) (got \"\(v)\")")
        }
    }
}
