import Config
import Glibc
import Support

/// The code half of one command: its typed params and its handler. The other half, the row (summary,
/// params doc, gates, gateway policy), is in the bundle's manifest; the registry joins the two by
/// name when the bundle loads and refuses a bundle whose code and manifest disagree.
public struct CommandHandler: Sendable {
    public let name: String
    /// Decodes and validates the params into the command's typed params struct and binds them to
    /// the handler: the call the dispatcher runs under its deadline. There is no second dispatch
    /// on the command name and no cast of the params.
    public let prepare: @Sendable (InvokeParams) throws(NodeError) -> CommandSpec.Call

    /// `R` is the command's result type (`CameraSnapResult`, …; `JSONValue` where the result is
    /// free-form: a plugin's passthrough, canvas.eval's value). The call encodes it once, to the
    /// JSONValue tree that the result frame's writer (JSONWriter) turns into the frame's bytes in
    /// one pass. The tree is not a second byte encode: its strings are the result's own (a 5 MB
    /// base64 payload is moved into the tree, not copied or escaped), and the bytes are written
    /// only once, straight into the frame's `payloadJSON` string.
    public init<P: CommandParams, R: Encodable & Sendable>(_ name: String, params: P.Type,
                                  handler: @escaping @Sendable (P, InvocationContext) async throws(NodeError) -> R) {
        self.name = name
        self.prepare = { (params: InvokeParams) throws(NodeError) -> CommandSpec.Call in
            let p = try P.decodeValidated(from: params)
            return { (context: InvocationContext) async throws(NodeError) -> JSONValue in
                try CommandResult.encode(try await handler(p, context), command: name)
            }
        }
    }
}

/// The result of a command that answers with nothing but success: JSON `null` (canvas.present).
public struct NullResult: Encodable, Sendable, Equatable {
    public init() {}
    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encodeNil()
    }
}

/// A command's result as the payload tree.
public enum CommandResult {
    public static func encode<R: Encodable>(_ result: R, command: String) throws(NodeError) -> JSONValue {
        do { return try JSONValueEncoder.encode(result) }
        catch { throw NodeError.unavailable("\(command) produced a result that cannot be encoded: \(error)") }
    }
}

/// One row of the command table as the registry serves it: the manifest's row, the capability it
/// belongs to, and its handler (nil while the capability is not loaded: disabled, missing or
/// refused; the dispatcher then answers with the capability's refusal).
public struct CommandSpec: Sendable {
    public let row: BundleManifest.Command
    /// The capability (connect `caps` entry and config section) this command belongs to.
    public let capability: String
    public let prepare: (@Sendable (InvokeParams) throws(NodeError) -> Call)?

    /// One prepared invoke.
    public typealias Call = @Sendable (InvocationContext) async throws(NodeError) -> JSONValue

    public init(row: BundleManifest.Command, capability: String, handler: CommandHandler?) {
        self.row = row
        self.capability = capability
        self.prepare = handler?.prepare
    }

    public var name: String { row.name }
    public var summary: String { row.summary }
    public var requiresForeground: Bool { row.requiresForeground }
    public var dangerous: Bool { row.dangerous }
    public var duplex: Bool { row.duplex }
    public var structuredResult: Bool { row.structuredResult }
    public var permission: String? { row.permission }
    public var paramsDoc: [(String, String)] { row.params.map { ($0.name, $0.doc) } }
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
