import Config
import Glibc
import Kit
import Support

/// Turns POSIX locale settings into the BCP 47 tag the protocol's `locale` field carries
/// ("en_US.UTF-8" → "en-US"), the form iOS/Android report.
enum LocaleResolver {
    static let fallback = "en-US"

    /// POSIX precedence: the first *set* variable of LC_ALL, LC_MESSAGES, LANG decides, even when
    /// it says "C". A daemon started by systemd often has none of them, so the system-wide
    /// setting (locale.conf, or Debian's /etc/default/locale) is the next source.
    static func resolve(environment: [String: String], sys: SysRoot) -> String {
        for key in ["LC_ALL", "LC_MESSAGES", "LANG"] {
            if let v = environment[key], !v.isEmpty { return bcp47(v) ?? fallback }
        }
        for path in ["/etc/locale.conf", "/etc/default/locale"] {
            guard let text = sys.read(path) else { continue }
            let vars = ShellAssignments.parse(text)
            for key in ["LC_ALL", "LC_MESSAGES", "LANG"] {
                if let v = vars[key], !v.isEmpty { return bcp47(v) ?? fallback }
            }
        }
        return fallback
    }

    /// glibc modifiers that name a script; the others (@euro, @valencia) carry no tag information.
    private static let scriptModifiers = ["latin": "Latn", "cyrillic": "Cyrl", "devanagari": "Deva"]

    /// "language[_territory][.codeset][@modifier]" → "language[-Script][-TERRITORY]"; nil for the
    /// C/POSIX locales, which name no language.
    static func bcp47(_ posix: String) -> String? {
        var rest = Substring(posix.trimmed())
        var script: String?
        if let at = rest.firstIndex(of: "@") {
            script = scriptModifiers[rest[rest.index(after: at)...].lowercased()]
            rest = rest[..<at]
        }
        if let dot = rest.firstIndex(of: ".") { rest = rest[..<dot] }
        guard !rest.isEmpty, rest != "C", rest != "POSIX" else { return nil }
        let parts = rest.split(separator: "_", maxSplits: 1)
        var tag = parts[0].lowercased()
        if let script { tag += "-" + script }
        if parts.count > 1, !parts[1].isEmpty { tag += "-" + parts[1].uppercased() }
        return tag
    }
}
