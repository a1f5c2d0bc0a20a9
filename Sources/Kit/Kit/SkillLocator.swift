import Support

/// The rule a node-hosted skill's name follows (the gateway's schema for `node.skills.update`):
/// 1–64 characters of lower-case letters, digits and hyphens, starting and ending with a letter or
/// digit, never two hyphens in a row. In Kit because both the runtime (which publishes skills) and
/// the system bundle (which maps a skill's cwd locator) check it.
public enum SkillName {
    public static let maxLength = 64

    public static func isValid(_ name: String) -> Bool {
        let b = Array(name.utf8)
        guard (1...maxLength).contains(b.count) else { return false }
        func alnum(_ c: UInt8) -> Bool { (c >= 0x61 && c <= 0x7A) || (c >= 0x30 && c <= 0x39) }
        guard alnum(b[0]), alnum(b[b.count - 1]) else { return false }
        for i in b.indices {
            guard alnum(b[i]) || b[i] == 0x2D else { return false }
            if b[i] == 0x2D, i > 0, b[i - 1] == 0x2D { return false }
        }
        return true
    }
}

/// How `system.run` finds a skill this node publishes: the gateway hands the agent the locator
/// `node://<percent-encoded node id>/skills/<name>` and the agent uses it as a command's `cwd`.
/// The runtime provides the node id and the lookup of a published skill's directory; the system
/// bundle only asks this type, so it never sees the core.
public struct SkillLocator: Sendable {
    public static let scheme = "node://"
    public static let invalid = NodeError.invalidRequest("node skill cwd locator is invalid for this node")
    public static let unavailable = NodeError.invalidRequest("node skill cwd locator is unavailable")

    /// This node's id (its device id); nil when it cannot be known (then every locator is invalid).
    let nodeId: @Sendable () -> String?
    /// The directory of the published skill of this name, nil when there is none.
    let directory: @Sendable (_ name: String) -> String?

    public init(nodeId: @escaping @Sendable () -> String?, directory: @escaping @Sendable (_ name: String) -> String?) {
        self.nodeId = nodeId; self.directory = directory
    }

    /// A node without skills (built outside a node): every locator is refused as unavailable.
    public static let none = SkillLocator(nodeId: { nil }, directory: { _ in nil })

    /// Whether `cwd` is meant as a skill locator (then it must resolve or the run is refused; it
    /// is never taken as a relative path).
    public static func isLocator(_ cwd: String) -> Bool {
        cwd.utf8.count >= scheme.utf8.count && cwd.prefix(scheme.count).lowercased() == scheme
    }

    /// `cwd` as the run should use it: a locator becomes its skill's directory, anything else is
    /// returned unchanged. A locator for another node, or one that is malformed (percent escapes,
    /// `..`, a query, a name outside the rule), is `invalid`; one for a skill this node does not
    /// publish is `unavailable`.
    public func resolve(cwd: String?) throws(NodeError) -> String? {
        guard let cwd, Self.isLocator(cwd) else { return cwd }
        let rest = cwd.dropFirst(Self.scheme.count)
        guard let slash = rest.firstIndex(of: "/") else { throw Self.invalid }
        guard let host = Self.percentDecoded(rest[..<slash]), let id = nodeId(), !id.isEmpty, host == id else { throw Self.invalid }
        let path = rest[slash...]
        guard path.hasPrefix("/skills/") else { throw Self.invalid }
        let name = String(path.dropFirst("/skills/".count))
        // The name is never decoded: a valid one has no character that needs an escape, so `%2F`,
        // `%2e%2e` and the like are refused here with every other malformed name.
        guard SkillName.isValid(name) else { throw Self.invalid }
        guard let dir = directory(name) else { throw Self.unavailable }
        return dir
    }

    /// RFC 3986 percent-decoding of the authority, nil for a broken escape or bytes that are not UTF-8.
    static func percentDecoded(_ s: Substring) -> String? {
        var out: [UInt8] = []
        var it = Array(s.utf8)[...]
        while let c = it.popFirst() {
            guard c == 0x25 else { out.append(c); continue }
            guard it.count >= 2, let hi = hexValue(it.removeFirst()), let lo = hexValue(it.removeFirst()) else { return nil }
            out.append(hi << 4 | lo)
        }
        guard !out.isEmpty, let text = String(validating: out, as: UTF8.self) else { return nil }
        return text
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: return c - 0x30
        case 0x41...0x46: return c - 0x41 + 10
        case 0x61...0x66: return c - 0x61 + 10
        default: return nil
        }
    }
}
