import Kit
import Support

/// The allowlist's view of CodeRunners (Kit): which installed runner an entry's glob covers.
extension CodeRunners {
    /// A runner the (canonical) pattern covers, if any: a path glob over an installed runner's path,
    /// or a bare-name glob over a runner's name.
    static func covered(by canonical: String, home: String, path: String?) -> String? {
        if canonical.hasPrefix("=") { return nil }
        if canonical.contains("/") {
            return installed(path: path).first { PathGlob.matches(canonical, $0, home: home) }
        }
        let names = Set(installed(path: path).map(PathName.lastComponent)).union(Self.names)
        return names.sorted().first { PathGlob.matches(canonical, $0, home: home) }
    }
}
