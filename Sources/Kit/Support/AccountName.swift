import Glibc

/// An account as a person reads it in a message: its login name, or "uid N" when it has none.
public enum AccountName {
    public static func of(_ uid: uid_t) -> String {
        getpwuid(uid).flatMap { $0.pointee.pw_name.map { String(cString: $0) } } ?? "uid \(uid)"
    }

    /// The id of the group named `name`, or nil when there is none.
    public static func groupId(_ name: String) -> gid_t? {
        getgrnam(name).map { $0.pointee.gr_gid }
    }
}
