import Support

/// What a bundle needs from the system, as Debian packages, in its manifest's `packages` block:
/// scripts/setup installs from it, scripts/package writes the package's Recommends and Suggests
/// from it, doctor and a bundle that cannot load name what to install from it. No script names a
/// capability's packages itself.
///
/// An entry is a package name, alternatives as Debian writes them ("chromium-headless-shell |
/// chromium"), and optionally the releases it is for in brackets ("libcamera-dev [trixie]": Debian
/// 12's libcamera is too old). scripts/setup reads these blocks with awk before any Swift exists;
/// a test checks that it reads them as this reader does, so keep each block's arrays plain: one
/// `kind: ["…", …]` per kind, no comments inside the block.
public struct PackageNeeds: Sendable, Equatable {
    /// To compile the bundle (headers, pkg-config files, a C++ compiler).
    public var build: [String] = []
    /// Without which its library cannot load.
    public var depends: [String] = []
    /// What it uses when present (its data, the programs it runs): the package's Recommends.
    public var recommends: [String] = []
    /// What it can use: the package's Suggests.
    public var suggests: [String] = []
    /// What its tests and benchmarks need besides (servers, compositors, reference tools, recordings).
    public var test: [String] = []

    public init(build: [String] = [], depends: [String] = [], recommends: [String] = [], suggests: [String] = [], test: [String] = []) {
        self.build = build; self.depends = depends; self.recommends = recommends; self.suggests = suggests; self.test = test
    }

    public static let kinds = ["build", "depends", "recommends", "suggests", "test"]
    public static let releases = ["bookworm", "trixie"]

    public func entries(_ kind: String) -> [String] {
        switch kind {
        case "build": return build
        case "depends": return depends
        case "recommends": return recommends
        case "suggests": return suggests
        case "test": return test
        default: return []
        }
    }

    /// The entries of `kind` for `release` (nil: every release), without their release brackets.
    public func names(_ kind: String, release: String? = nil) -> [String] {
        entries(kind).compactMap { Self.entry($0) }.filter { e in release.map { e.releases.isEmpty || e.releases.contains($0) } ?? true }.map(\.text)
    }

    /// An entry's package text and the releases it is limited to (empty: all); nil when malformed.
    public static func entry(_ s: String) -> (text: String, releases: [String])? {
        var text = s.trimmed(), releases: [String] = []
        if let open = text.firstIndex(of: "["), text.hasSuffix("]") {
            releases = text[text.index(after: open)..<text.index(before: text.endIndex)].split(separator: " ").map(String.init)
            text = String(text[..<open]).trimmed()
        }
        let alternatives = text.split(separator: "|").map { String($0).trimmed() }
        guard !alternatives.isEmpty, alternatives.allSatisfy(isPackageName), releases.allSatisfy(Self.releases.contains) else { return nil }
        return (alternatives.joined(separator: " | "), releases)
    }

    /// Debian's rule: lower-case letters, digits, + - . ; two characters at least, starting alphanumeric.
    static func isPackageName(_ s: String) -> Bool {
        guard s.count >= 2, let first = s.unicodeScalars.first, ("a"..."z").contains(first) || ("0"..."9").contains(first) else { return false }
        return s.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || "+-.".unicodeScalars.contains($0) }
    }
}
