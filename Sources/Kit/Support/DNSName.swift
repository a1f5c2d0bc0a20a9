/// A domain name as DNS carries it: a list of labels of raw bytes. DNS-SD instance names are
/// arbitrary UTF-8 and may contain dots and spaces ("Home GW.2"), so a name is never kept as a
/// dotted string internally; the dotted, escaped text form (`Home\032GW\.2._openclaw-gw._tcp.local.`)
/// exists only for people, config files and the system resolver, which takes that form.
public struct DNSName: Hashable, Sendable, CustomStringConvertible {
    public var labels: [[UInt8]]

    public init(labels: [[UInt8]]) { self.labels = labels }

    /// Parses the text form: labels split on unescaped dots; `\DDD` (decimal byte) and `\X`
    /// (literal X) escapes as in RFC 1035 §5.1 / RFC 6763 §4.3. A trailing dot is optional.
    public init(text: String) throws(DNSNameError) {
        var labels: [[UInt8]] = []
        var cur: [UInt8] = []
        let bytes = Array(text.utf8)
        var i = 0
        while i < bytes.count {
            let b = bytes[i]
            if b == UInt8(ascii: ".") {
                guard !cur.isEmpty else { throw DNSNameError("empty label in \"\(text)\"") }
                labels.append(cur); cur = []
                i += 1
            } else if b == UInt8(ascii: "\\") {
                let (byte, used) = DNSSDEscape.decodeEscape(bytes, at: i)
                cur.append(byte)
                i += used
            } else {
                cur.append(b); i += 1
            }
        }
        if !cur.isEmpty { labels.append(cur) }
        for l in labels where l.count > 63 { throw DNSNameError("label longer than 63 bytes in \"\(text)\"") }
        self.labels = labels
        guard wireLength <= 255 else { throw DNSNameError("name longer than 255 bytes: \"\(text)\"") }
    }

    /// Bytes the name takes on the wire (length bytes + labels + root).
    public var wireLength: Int { labels.reduce(1) { $0 + 1 + $1.count } }

    /// Text form with a trailing dot, escaped so it parses back to the same labels.
    public var text: String {
        labels.isEmpty ? "." : labels.map(DNSSDEscape.escapeLabel).joined(separator: ".") + "."
    }

    public var description: String { text }

    public func prepending(_ other: DNSName) -> DNSName { DNSName(labels: other.labels + labels) }

    /// DNS compares names case-insensitively (ASCII only).
    public func sameName(as other: DNSName) -> Bool {
        labels.count == other.labels.count &&
            zip(labels, other.labels).allSatisfy { a, b in a.count == b.count && zip(a, b).allSatisfy { lower($0) == lower($1) } }
    }

    private func lower(_ b: UInt8) -> UInt8 { (65...90).contains(b) ? b + 32 : b }
}

public struct DNSNameError: Error, Sendable, CustomStringConvertible, Equatable {
    public let description: String
    init(_ d: String) { description = d }
}

/// DNS-SD's escaping of instance names (`\032` for a space, `\.` for a dot, `\\` for a backslash).
/// avahi-browse, dns-sd and `dig` print names this way; people copy them into gateway.name.
public enum DNSSDEscape {
    /// "OpenClaw\032Test\032GW" → "OpenClaw Test GW". Bad escapes (`\999`, a trailing `\`) are kept
    /// as they are rather than guessed at.
    public static func unescape(_ s: String) -> String {
        let bytes = Array(s.utf8)
        var out: [UInt8] = []
        var i = 0
        while i < bytes.count {
            if bytes[i] == UInt8(ascii: "\\") {
                let (b, used) = decodeEscape(bytes, at: i)
                out.append(b); i += used
            } else {
                out.append(bytes[i]); i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// One label in text form: `.` and `\` escaped, bytes outside printable ASCII (and space) as
    /// `\DDD`; UTF-8 above 0x7F stays readable.
    public static func escapeLabel(_ label: [UInt8]) -> String {
        var out: [UInt8] = []
        for b in label {
            switch b {
            case UInt8(ascii: "."), UInt8(ascii: "\\"):
                out += [UInt8(ascii: "\\"), b]
            case 0...0x20, 0x7F:
                out += Array("\\\(Int(b).zeroPadded(3))".utf8)
            default:
                out.append(b)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes the escape starting at `bytes[i]` (a backslash). Returns the byte and how many input
    /// bytes it used; an invalid escape yields the backslash itself.
    static func decodeEscape(_ bytes: [UInt8], at i: Int) -> (UInt8, Int) {
        guard i + 1 < bytes.count else { return (UInt8(ascii: "\\"), 1) }
        let digits = bytes[(i + 1)..<min(i + 4, bytes.count)]
        if digits.count == 3, digits.allSatisfy({ (48...57).contains($0) }) {
            let v = digits.reduce(0) { $0 * 10 + Int($1 - 48) }
            if v <= 255 { return (UInt8(v), 4) }
            return (UInt8(ascii: "\\"), 1)
        }
        if (48...57).contains(bytes[i + 1]) { return (UInt8(ascii: "\\"), 1) }
        return (bytes[i + 1], 2)
    }
}
