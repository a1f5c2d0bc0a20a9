/// The Debian package that ships a library on the release this node runs on. The node's messages
/// name packages by their Debian 12 names; Debian 13 renamed the libraries whose ABI changed with
/// 64-bit time_t (a `t64` suffix), so on Debian 13 (and its derivatives: Raspberry Pi OS, Ubuntu
/// 24.04) "apt install libasound2" would name a package that does not exist there.
public enum DebianPackageName {
    /// Debian 12 name → Debian 13 name, for the libraries the node opens at run time.
    static let timeT64Renames = ["libasound2": "libasound2t64", "libssl3": "libssl3t64", "libmpg123-0": "libmpg123-0t64"]

    /// Whether this system has had the 64-bit time_t transition: os-release says Debian 13 or
    /// later (or a release built on it, ID_LIKE=debian with VERSION_CODENAME trixie or later).
    public static let hasTimeT64Names: Bool = {
        for path in ["/etc/os-release", "/usr/lib/os-release"] {
            guard let text = FileSystem.readText(path) else { continue }
            let fields = ShellAssignments.parse(text)
            if fields["ID"] == "debian" || fields["ID_LIKE"]?.contains("debian") == true {
                if let version = fields["VERSION_ID"].flatMap({ Int($0.prefix { $0.isNumber }) }), fields["ID"] == "debian" {
                    return version >= 13
                }
                let older: Set<String> = ["buster", "bullseye", "bookworm", "focal", "jammy"]
                if let codename = fields["VERSION_CODENAME"] ?? fields["DEBIAN_CODENAME"] { return !older.contains(codename) }
            }
            return false
        }
        return false
    }()

    /// `debian12Name` as this release names it.
    public static func onThisRelease(_ debian12Name: String) -> String {
        hasTimeT64Names ? (timeT64Renames[debian12Name] ?? debian12Name) : debian12Name
    }
}
