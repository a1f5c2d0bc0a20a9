import Kit
import Support

/// desktop.stream's params, closed as upstream's node has them: `ticket` (the gateway broker's
/// 48-hex one-time ticket) and `attachPath`, which must be exactly `/node-desktop/attach?ticket=<ticket>`.
/// Refusals carry upstream's messages (code UNAVAILABLE, text "INVALID_REQUEST: …").
struct DesktopStreamParams: CommandParams {
    static let attachEndpoint = "/node-desktop/attach"
    let ticket: String
    let attachPath: String
    /// Why the params are refused, found while decoding and reported by `validated()` (so the
    /// refusal keeps upstream's code and wording instead of the decoder's).
    private let problem: String?

    init(ticket: String, attachPath: String) { self.ticket = ticket; self.attachPath = attachPath; problem = nil }

    init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: PathKey.self)
        let ticket = (try? c.decodeIfPresent(String.self, forKey: PathKey(stringValue: "ticket"))) ?? nil
        let path = (try? c.decodeIfPresent(String.self, forKey: PathKey(stringValue: "attachPath"))) ?? nil
        self.ticket = ticket ?? ""; attachPath = path ?? ""
        if !c.allKeys.allSatisfy({ ["ticket", "attachPath"].contains($0.stringValue) }) { problem = "params contain unsupported fields" }
        else if self.ticket.isEmpty || attachPath.isEmpty { problem = "ticket and attachPath required" }
        else { problem = nil }
    }

    func validated() throws(NodeError) -> DesktopStreamParams {
        if let problem { throw Self.refusal(problem) }
        guard ticket.utf8.count == 48, ticket.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else {
            throw Self.refusal("ticket and attachPath required")
        }
        guard attachPath == Self.attachEndpoint + "?ticket=" + ticket else { throw Self.refusal("ticket does not match attachPath") }
        return self
    }

    static func refusal(_ what: String) -> NodeError { NodeError(.unavailable, verbatim: "INVALID_REQUEST: desktop stream \(what)") }
}
