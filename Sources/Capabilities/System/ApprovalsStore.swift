import Kit
import Support

/// The exec-approvals document in the node's state database (one row of `capability_documents`),
/// with upstream's compare-and-swap contract: a write names the hash it was based on.
struct ApprovalsStore: Sendable {
    static let documentName = "exec-approvals"
    let documents: any DocumentStore
    /// Shown as `path` by system.execApprovals.get (where the document lives).
    let path: String

    struct Snapshot {
        let text: String?
        let document: ExecApprovalsDocument
        var exists: Bool { text != nil }
        var hash: String { ExecApprovalsDocument.hash(of: text) }
    }

    func snapshot() throws(NodeError) -> Snapshot {
        let text: String?
        do { text = try documents.read(Self.documentName) } catch { throw NodeError.unavailable("exec approvals: \(error.description)") }
        guard let text else { return Snapshot(text: nil, document: .empty) }
        guard let v = JSONValue.parse(text) else {
            throw NodeError.unavailable("exec approvals: the stored document is not JSON; replace it with system.execApprovals.set")
        }
        return Snapshot(text: text, document: ExecApprovalsDocument(json: v))
    }

    /// `system.execApprovals.get`.
    func get() throws(NodeError) -> ExecApprovalsSnapshotResult {
        let s = try snapshot()
        return ExecApprovalsSnapshotResult(path: path, exists: s.exists, hash: s.hash, file: s.document.redacted)
    }

    /// `system.execApprovals.set`: refuses a write not based on the current document, keeps the
    /// stored socket path and token when the new file has none, and returns the new snapshot.
    /// `pattern` canonicalizes each allowlist entry's pattern or refuses it (the ceiling).
    func set(file: JSONValue, baseHash: String?, pattern: (String, String?) throws(NodeError) -> String = { p, _ in p }) throws(NodeError) -> ExecApprovalsSnapshotResult {
        let current = try snapshot()
        if current.exists {
            guard let baseHash, !baseHash.isEmpty else {
                throw NodeError.invalidRequest("exec approvals base hash required; reload and retry")
            }
            guard baseHash == current.hash else { throw NodeError.invalidRequest("exec approvals changed; reload and retry") }
        }
        var next = try ExecApprovalsDocument.normalized(file, newId: { SecureRandom.uuid() }, pattern: pattern)
        if next.json["socket"] == nil, let socket = current.document.json["socket"], var o = next.json.objectValue {
            o["socket"] = socket
            next = ExecApprovalsDocument(json: .object(o))
        }
        try write(next.text, ifCurrent: current.text, conflict: "exec approvals changed; reload and retry")
        return try get()
    }

    /// Adds an allow-always entry for `agent`, re-reading and retrying if another writer got in between.
    func addEntry(_ entry: JSONValue, agent: String) throws(NodeError) {
        for _ in 0..<5 {
            let s = try snapshot()
            let next = s.document.adding(entry, to: agent)
            do { try write(next.text, ifCurrent: s.text, conflict: ""); return } catch where error.message.isEmpty { continue }
        }
        throw NodeError.unavailable("exec approvals kept changing; the allow-always entry was not saved")
    }

    private func write(_ text: String, ifCurrent expected: String?, conflict: String) throws(NodeError) {
        let ok: Bool
        do { ok = try documents.replace(Self.documentName, with: text, ifCurrent: expected) }
        catch { throw NodeError.unavailable("exec approvals: \(error.description)") }
        if !ok { throw NodeError(.invalidRequest, verbatim: conflict) }
    }
}
