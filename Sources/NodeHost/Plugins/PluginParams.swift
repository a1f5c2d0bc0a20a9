import Kit
import Support

/// A plugin command's params: any JSON object, passed to the plugin as it came (the plugin
/// validates its own params and answers INVALID_REQUEST).
public struct PluginParams: CommandParams {
    public let value: JSONValue
    public init(from decoder: Decoder) throws {
        _ = try decoder.container(keyedBy: PathKey.self)   // must be an object
        value = try decoder.singleValueContainer().decode(JSONValue.self)
    }
}
