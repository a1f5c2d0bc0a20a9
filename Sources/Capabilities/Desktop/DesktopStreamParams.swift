import Kit
import Support

/// desktop.stream's params, closed as upstream's node has them: `ticket` (the gateway broker's
/// 48-hex one-time ticket) and `attachPath`, which must be exactly `/node-desktop/attach?ticket=<ticket>`.
/// Refusals carry upstream's messages (code UNAVAILABLE, text "INVALID_REQUEST: …").
struct DesktopStreamParams: CommandParams {
    static let attachEndpoint = "/node-desktop/attach"
    let ticket: String
    let attachPath: String
    /// Upstream's params are closed: a key besides these two is refused (found while decoding,
    /// reported by `validated()` with upstream's code and wording).
    private let unsupportedFields: Bool

    init(ticket: String, attachPath: String) { self.ticket = ticket; self.attachPath = attachPath; unsupportedFields = false }

    init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: PathKey.self)
        ticket = try c.decode(String.self, forKey: PathKey(stringValue: "ticket"))
        attachPath = try c.decode(String.self, forKey: PathKey(stringValue: "attachPath"))
        unsupportedFields = !c.allKeys.allSatisfy { ["ticket", "attachPath"].contains($0.stringValue) }
    }

    /// A missing or mistyped ticket or path, in upstream's words.
    static func refusal(_ problem: NodeError, params: InvokeParams) -> NodeError {
        if case .value(.object(let o)) = params, o.keys.contains(where: { !["ticket", "attachPath"].contains($0) }) {
            return refusal("params contain unsupported fields")
        }
        return refusal("ticket and attachPath required")
    }

    func validated() throws(NodeError) -> DesktopStreamParams {
        if unsupportedFields { throw Self.refusal("params contain unsupported fields") }
        guard ticket.utf8.count == 48, ticket.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else {
            throw Self.refusal("ticket and attachPath required")
        }
        guard attachPath == Self.attachEndpoint + "?ticket=" + ticket else { throw Self.refusal("ticket does not match attachPath") }
        return self
    }

    static func refusal(_ what: String) -> NodeError { NodeError(.unavailable, verbatim: "INVALID_REQUEST: desktop stream \(what)") }
}
