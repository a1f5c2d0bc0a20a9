import Foundation

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
    /// Decodes and validates the params into the command's typed params struct.
    let decode: @Sendable (Data?) throws(NodeError) -> any Sendable

    public init<P: CommandParams>(_ name: String, capability: String, params: P.Type,
                                  requiresForeground: Bool = false, dangerous: Bool = false,
                                  permission: String? = nil, summary: String,
                                  paramsDoc: [(String, String)] = []) {
        self.name = name
        self.capability = capability
        self.requiresForeground = requiresForeground
        self.dangerous = dangerous
        self.permission = permission
        self.summary = summary
        self.paramsDoc = paramsDoc
        self.decode = { (data: Data?) throws(NodeError) -> any Sendable in try P.decodeValidated(from: data) }
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

    static func decodeValidated(from data: Data?) throws(NodeError) -> Self {
        // Absent params, `null` and "" all mean "no params" (the gateway sends paramsJSON: null).
        var bytes = data ?? Data("{}".utf8)
        let trimmed = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.isEmpty || trimmed == "null" { bytes = Data("{}".utf8) }
        let value: Self
        do {
            value = try JSONDecoder().decode(Self.self, from: bytes)
        } catch let error as DecodingError {
            throw NodeError.invalidRequest(ParamsDecodingMessage.describe(error))
        } catch {
            throw NodeError.invalidRequest("params are not valid JSON")
        }
        return try value.validated()
    }
}

/// Commands that take no params still accept (and ignore) any object.
public struct NoParams: CommandParams { public init() {} }

/// Turns a DecodingError into "maxWidth: expected a number" style text.
enum ParamsDecodingMessage {
    static func describe(_ error: DecodingError) -> String {
        func path(_ ctx: DecodingError.Context, _ extra: CodingKey? = nil) -> String {
            let keys = ctx.codingPath + (extra.map { [$0] } ?? [])
            let p = keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
            return p.isEmpty ? "params" : p
        }
        switch error {
        case .typeMismatch(let type, let ctx):
            if ctx.codingPath.isEmpty { return "params must be a JSON object" }
            return "\(path(ctx)): expected \(typeWord(type))"
        case .valueNotFound(let type, let ctx):
            return "\(path(ctx)): expected \(typeWord(type)), found null"
        case .keyNotFound(let key, let ctx):
            return "\(path(ctx, key)) is required"
        case .dataCorrupted(let ctx):
            if ctx.codingPath.isEmpty { return "params are not valid JSON" }
            return "\(path(ctx)): \(ctx.debugDescription)"
        @unknown default:
            return "invalid params"
        }
    }

    static func typeWord(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: return "a string"
        case is Bool.Type: return "a boolean"
        case is Int.Type, is Double.Type, is Int64.Type, is Float.Type: return "a number"
        default:
            let name = String(describing: type)
            if name.hasPrefix("Array") || name.hasPrefix("[") { return "an array" }
            if name.hasPrefix("Dictionary") { return "an object" }
            return "a value of type \(name)"
        }
    }
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
