import Config
import Glibc
import Support

/// An invoke's params as they arrived, parsed once: the gateway sends `paramsJSON` (text, or an
/// object from some hosts), the control socket an object. Decoding into the command's typed params
/// struct happens once, in the dispatcher, from this tree — never by printing and re-parsing it.
public enum InvokeParams: Sendable, Equatable {
    /// Absent, `null`, or blank text: the command's defaults.
    case none
    case value(JSONValue)
    /// Text that is not JSON: INVALID_REQUEST once the command's other gates have passed.
    case unparsable

    /// From `paramsJSON` text (nil = absent).
    public init(text: String?) {
        guard let text, !text.allSatisfy({ $0 == " " || $0 == "\n" || $0 == "\r" || $0 == "\t" }) else { self = .none; return }
        guard let v = JSONValue.parse(text) else { self = .unparsable; return }
        self = v == .null ? .none : .value(v)
    }

    /// From an already-parsed value (nil or null = absent).
    public init(_ value: JSONValue?) {
        guard let value, value != .null else { self = .none; return }
        self = .value(value)
    }
}
