import Config
import Glibc
import Kit
import Store
import Support

/// A setup code from `openclaw qr`: base64url of `{"url": "ws(s)://…", "urls"?: […], "bootstrapToken": "…"}`
/// (docs/PROTOCOL.md §3.4). Limits follow the Windows node's decoder.
public struct SetupCode: Sendable, Equatable {
    public let url: String?
    public let urls: [String]
    public let bootstrapToken: String

    public struct Invalid: Error, CustomStringConvertible {
        public let description: String
    }

    public init(decoding code: String) throws(Invalid) {
        let trimmed = code.trimmed()
        guard !trimmed.isEmpty, trimmed.count <= 2048 else { throw Invalid(description: "gateway.setupCode is empty or longer than 2048 characters") }
        guard let bytes = Encoding.fromBase64url(trimmed), bytes.count <= 4096 else {
            throw Invalid(description: "gateway.setupCode is not base64url text (copy it again from `openclaw qr`)")
        }
        guard let v = JSONValue.parse(bytes), case .object = v else {
            throw Invalid(description: "gateway.setupCode does not contain a JSON object")
        }
        guard let token = v["bootstrapToken"]?.stringValue, !token.isEmpty, token.count <= 512 else {
            throw Invalid(description: "gateway.setupCode has no bootstrapToken")
        }
        bootstrapToken = token
        url = v["url"]?.stringValue
        urls = v["urls"]?.arrayValue?.compactMap(\.stringValue) ?? []
    }
}
