import Kit
import Support

/// Prometheus's text exposition format (version 0.0.4, what every scraper reads): per family a
/// `# HELP` and a `# TYPE` line, then one `name{label="value"} number` line per sample. Label
/// values escape backslash, double quote and newline; HELP text escapes backslash and newline.
enum MetricsText {
    static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    static func render(_ families: [MetricFamily]) -> String {
        var out = ""
        for f in families {
            out += "# HELP \(f.name) \(escapeHelp(f.help))\n# TYPE \(f.name) \(f.kind.rawValue)\n"
            for s in f.samples { out += sampleLine(f.name + s.suffix, s.labels, s.value) }
        }
        return out
    }

    private static func sampleLine(_ name: String, _ labels: [(String, String)], _ value: Double) -> String {
        let l = labels.isEmpty ? "" : "{" + labels.map { "\($0.0)=\"\(escapeLabel($0.1))\"" }.joined(separator: ",") + "}"
        return "\(name)\(l) \(number(value))\n"
    }

    static func number(_ v: Double) -> String {
        if v.isNaN { return "NaN" }
        if v.isInfinite { return v > 0 ? "+Inf" : "-Inf" }
        return NumberText.plain(v)
    }

    static func escapeLabel(_ s: String) -> String { escape(s, quotes: true) }
    static func escapeHelp(_ s: String) -> String { escape(s, quotes: false) }

    /// Backslash and newline escaped (both places); a double quote too in a label value.
    private static func escape(_ s: String, quotes: Bool) -> String {
        var out = ""
        for c in s.unicodeScalars {
            switch c {
            case "\\": out += "\\\\"
            case "\"" where quotes: out += "\\\""
            case "\n": out += "\\n"
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    }
}
