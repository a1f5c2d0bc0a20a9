/// Which Debian packages this system has installed, read from dpkg's own status file (no process
/// started). nil where there is no dpkg database (not a Debian-like system): nothing can be said.
public struct InstalledPackages: Sendable {
    public let names: Set<String>

    public init(names: Set<String>) { self.names = names }

    /// The packages whose status is "install ok installed" in `statusFile`.
    public static func read(_ statusFile: String = "/var/lib/dpkg/status") -> InstalledPackages? {
        guard let text = FileSystem.readText(statusFile) else { return nil }
        var names = Set<String>(), package: Substring?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.isEmpty { package = nil }
            else if line.hasPrefix("Package: ") { package = line.dropFirst("Package: ".count) }
            else if line == "Status: install ok installed", let package { names.insert(String(package)) }
        }
        return InstalledPackages(names: names)
    }

    /// Whether an entry is satisfied: one of its alternatives ("a | b") installed (an architecture
    /// qualifier such as ":amd64" is not part of the name dpkg's status uses).
    public func satisfies(_ entry: String) -> Bool {
        entry.split(separator: "|").contains { names.contains(String($0).trimmed()) }
    }

    /// The release's name for PackageNeeds' [bookworm|trixie] marks.
    public static var release: String { DebianPackageName.hasTimeT64Names ? "trixie" : "bookworm" }
}
