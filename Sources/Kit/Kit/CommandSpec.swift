import Config
import Glibc
import Support

/// The code half of one command: its typed params and its handler. The other half, the row (summary,
/// params doc, gates, gateway policy), is in the bundle's manifest; the registry joins the two by
/// name when the bundle loads and refuses a bundle whose code and manifest disagree.
public struct CommandHandler: Sendable {
    public let name: String
    /// Decodes the params (already checked against the manifest row, defaults filled in) into the
    /// command's typed params struct and binds them to the handler: the call the dispatcher runs
    /// under its deadline. There is no second dispatch on the command name and no cast of the params.
    public let bind: @Sendable (JSONValue) throws(NodeError) -> CommandSpec.Call
    /// What is wrong between the Swift params type and the manifest row's params (empty: they fit),
    /// asked when the bundle loads (ParamsSchemaProbe).
    public let paramsMismatches: @Sendable ([ConfigField]) -> [String]
    /// The params tree checked against the row, refusals in the params type's words.
    let checkTree: @Sendable (InvokeParams, BundleManifest.Command?) throws(NodeError) -> JSONValue

    /// `R` is the command's result type (`CameraSnapResult`, …; `JSONValue` where the result is
    /// free-form: a plugin's passthrough, canvas.eval's value). The call encodes it once, to the
    /// JSONValue tree that the result frame's writer (JSONWriter) turns into the frame's bytes in
    /// one pass. The tree is not a second byte encode: its strings are the result's own (a 5 MB
    /// base64 payload is moved into the tree, not copied or escaped), and the bytes are written
    /// only once, straight into the frame's `payloadJSON` string.
    public init<P: CommandParams, R: Encodable & Sendable>(_ name: String, params: P.Type,
                                  handler: @escaping @Sendable (P, InvocationContext) async throws(NodeError) -> R) {
        self.name = name
        self.bind = { (params: JSONValue) throws(NodeError) -> CommandSpec.Call in
            let p = try P.decodeValidated(from: params)
            return { (context: InvocationContext) async throws(NodeError) -> JSONValue in
                try CommandResult.encode(try await handler(p, context), command: name)
            }
        }
        self.paramsMismatches = { fields in P.self == NoParams.self ? [] : ParamsSchemaProbe.mismatches(P.self, fields: fields) }
        self.checkTree = { (params, row) throws(NodeError) in try P.checkedTree(params, row: row) }
    }

    /// The params as the dispatcher sees them, checked against `row`, bound to the handler: what
    /// CommandSpec runs for each invoke (also how a test calls a handler on its own).
    public func prepare(_ params: InvokeParams, row: BundleManifest.Command? = nil) throws(NodeError) -> CommandSpec.Call {
        try bind(checkTree(params, row))
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
        if let handler {
            let prepare: @Sendable (InvokeParams) throws(NodeError) -> Call = { p throws(NodeError) in try handler.prepare(p, row: row) }
            self.prepare = prepare
        } else {
            self.prepare = nil
        }
    }

    public var name: String { row.name }
    public var summary: String { row.summary }
    public var requiresForeground: Bool { row.requiresForeground }
    public var dangerous: Bool { row.dangerous }
    public var duplex: Bool { row.duplex }
    public var structuredResult: Bool { row.structuredResult }
    public var permission: String? { row.permission }
    /// Each param and its description in words ("integer 16..8192, default 1600: …").
    public var paramsDoc: [(String, String)] { row.paramsDoc }
}

/// Typed params of one command, named exactly as on the wire. Types, ranges, allowed values and
/// defaults are the manifest row's (checked and filled in by the host before decoding): a param
/// with a default or `required: true` is a plain field, one without is Optional, an enum param is a
/// Swift enum. The bundle loader refuses a type that does not fit its row (ParamsSchemaProbe).
public protocol CommandParams: Decodable, Sendable {
    /// Rules the manifest cannot state (between two params, or within one value's text); throws
    /// INVALID_REQUEST naming the field. Most commands have none.
    func validated() throws(NodeError) -> Self
    static func refusal(_ problem: NodeError, params: InvokeParams) -> NodeError
}

extension CommandParams {
    public func validated() throws(NodeError) -> Self { self }

    /// Upstream's words for a refusal of the host's params check: most commands keep the host's
    /// ("maxWidth must be between …"); the few whose callers match on another node's exact
    /// refusals (mcp.tools.call.v1, desktop.stream) say them here.
    public static func refusal(_ problem: NodeError, params: InvokeParams) -> NodeError { problem }

    static func checkedTree(_ params: InvokeParams, row: BundleManifest.Command?) throws(NodeError) -> JSONValue {
        do throws(NodeError) { return try ParamsValidation.tree(params, row: row) }
        catch { throw refusal(error, params: params) }
    }

    /// Decodes `params` as the dispatcher does for `row`: checked against the row, defaults filled
    /// in, then `validated()`. (Tests of a params type call this with their bundle's manifest row.)
    public static func decode(_ params: InvokeParams, row: BundleManifest.Command) throws(NodeError) -> Self {
        try decodeValidated(from: checkedTree(params, row: row))
    }

    /// Decodes `params` for the installed manifest's row of `command` (tests of a bundle's params).
    public static func decode(_ params: InvokeParams, command: String) throws(NodeError) -> Self {
        guard let row = BundleCatalog.current.command(command) else {
            throw NodeError.unavailable("no installed manifest declares \(command) (in \(BundleCatalog.searchDirectories))")
        }
        return try decode(params, row: row)
    }

    static func decodeValidated(from tree: JSONValue) throws(NodeError) -> Self {
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

