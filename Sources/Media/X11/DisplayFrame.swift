import Support

/// The `displayFrameId` screen.snapshot returns and computer.act checks (docs/PROTOCOL.md §6.5):
/// stateless, so any process can verify it. It carries the delivered image size in clear (the
/// scale for mapping coordinates back) and a hash binding that size to the display's identity and
/// geometry and to the reference width the agent asked for. A later action re-derives the hash from
/// the live display: a changed monitor, resolution or refWidth no longer matches.
public struct DisplayFrame: Equatable, Sendable {
    public let deliveredWidth: Int
    public let deliveredHeight: Int
    public let hash: String

    public static let prefix = "display-frame:v1:"

    public init(identity: String, referenceWidth: Int, deliveredWidth: Int, deliveredHeight: Int) {
        self.deliveredWidth = deliveredWidth
        self.deliveredHeight = deliveredHeight
        hash = DisplayFrame.digest(identity, referenceWidth, deliveredWidth, deliveredHeight)
    }

    private init(deliveredWidth: Int, deliveredHeight: Int, hash: String) {
        self.deliveredWidth = deliveredWidth; self.deliveredHeight = deliveredHeight; self.hash = hash
    }

    private static func digest(_ identity: String, _ ref: Int, _ w: Int, _ h: Int) -> String {
        String(SHA256.hex([identity, String(ref), String(w), String(h)].joined(separator: "\0")).prefix(32))
    }

    /// "display-frame:v1:<w>x<h>:<hash>".
    public var id: String { "\(Self.prefix)\(deliveredWidth)x\(deliveredHeight):\(hash)" }

    /// Parses an id (nil when it is not one of ours).
    public init?(id: String) {
        guard id.hasPrefix(Self.prefix) else { return nil }
        let parts = id.dropFirst(Self.prefix.count).split(separator: ":")
        guard parts.count == 2 else { return nil }
        let size = parts[0].split(separator: "x")
        guard size.count == 2, let w = Int(size[0]), let h = Int(size[1]), w > 0, h > 0, parts[1].count == 32 else { return nil }
        self.init(deliveredWidth: w, deliveredHeight: h, hash: String(parts[1]))
    }

    /// Whether this frame was issued for the display as it is now and for this refWidth.
    public func matches(identity: String, referenceWidth: Int) -> Bool {
        hash == DisplayFrame.digest(identity, referenceWidth, deliveredWidth, deliveredHeight)
    }
}
