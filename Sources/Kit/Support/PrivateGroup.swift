import Glibc

/// Debian's user private groups: every account has a group of its own, and since Debian 13 a
/// login's umask is 0002 (pam_umask with USERGROUPS_ENAB), so what a user checks out or builds is
/// group-writable by that group alone. Such a bit lets nobody else write, so FileTrust accepts it
/// under the rule Debian's OpenSSH applies to StrictModes: the group must have exactly one member,
/// the file's owner — counting the accounts whose primary group it is and its listed members.
/// A group with no member at all is not private (setgid programs use those).
public enum PrivateGroup {
    /// Serialises the passwd enumeration, whose position is global to the process.
    private static let enumeration = Lock()
    /// Answers of the last few seconds: a checkout under umask 0002 makes every file and directory
    /// of a bundle's path group-writable, and reading the account list for each made `caps` 2-3x
    /// slower. A few seconds cover one scan; a membership change is seen at the next one.
    private static let recent = Locked([Key: (answer: Bool, at: ContinuousClock.Instant)]())
    private static let remembered: Duration = .seconds(5)
    private struct Key: Hashable { let gid: gid_t; let owner: uid_t }

    /// Whether group `gid` has exactly one member and that member is account `owner`.
    public static func isPrivate(gid: gid_t, to owner: uid_t) -> Bool {
        let key = Key(gid: gid, owner: owner), now = ContinuousClock.now
        if let known = recent.withLock({ $0[key] }), now - known.at < remembered { return known.answer }
        let answer = lookUp(gid: gid, owner: owner)
        recent.withLock { $0[key] = (answer, now) }
        return answer
    }

    private static func lookUp(gid: gid_t, owner: uid_t) -> Bool {
        guard let listed = listedMembers(gid), let ownerName = name(of: owner) else { return false }
        if listed.contains(where: { $0 != ownerName }) { return false }
        var primaryMembers: [uid_t] = []
        guard forEachAccount({ uid, group in if group == gid { primaryMembers.append(uid) } }) else { return false }
        if primaryMembers.contains(where: { $0 != owner }) { return false }
        return !primaryMembers.isEmpty || !listed.isEmpty
    }

    /// The names in the group's member list; nil when there is no such group. The strings point
    /// into `buffer`, so they are read while it is pinned.
    private static func listedMembers(_ gid: gid_t) -> [String]? {
        var buffer = [CChar](repeating: 0, count: 16384)
        return buffer.withUnsafeMutableBufferPointer { b -> [String]? in
            var group = group(), result: UnsafeMutablePointer<group>?
            guard getgrgid_r(gid, &group, b.baseAddress!, b.count, &result) == 0, result != nil else { return nil }
            var names: [String] = []
            var member = group.gr_mem
            while let m = member, let name = m.pointee {
                names.append(String(cString: name))
                member = m + 1
            }
            return names
        }
    }

    private static func name(of uid: uid_t) -> String? {
        var buffer = [CChar](repeating: 0, count: 16384)
        return buffer.withUnsafeMutableBufferPointer { b -> String? in
            var account = passwd(), result: UnsafeMutablePointer<passwd>?
            guard getpwuid_r(uid, &account, b.baseAddress!, b.count, &result) == 0, result != nil else { return nil }
            return account.pw_name.map { String(cString: $0) }
        }
    }

    /// Calls `body` with each account's uid and primary gid; false when the list could not be read.
    private static func forEachAccount(_ body: (uid_t, gid_t) -> Void) -> Bool {
        enumeration.withLock {
            var buffer = [CChar](repeating: 0, count: 16384)
            var account = passwd(), result: UnsafeMutablePointer<passwd>?
            setpwent(); defer { endpwent() }
            while true {
                let rc = getpwent_r(&account, &buffer, buffer.count, &result)
                if rc == ENOENT || (rc == 0 && result == nil) { return true }
                guard rc == 0 else { return false }
                body(account.pw_uid, account.pw_gid)
            }
        }
    }
}
