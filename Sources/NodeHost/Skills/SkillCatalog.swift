import Glibc
import Kit
import Support

/// One skill as the node publishes it (`node.skills.update`) and maps its cwd locator to.
package struct NodeSkill: Sendable, Equatable {
    package let name: String
    let description: String
    /// The whole SKILL.md text.
    package let content: String
    /// Its folder: a real directory (never a symbolic link) inside the canonical skills directory.
    package let directory: String

    var descriptor: JSONValue { ["name": .string(name), "description": .string(description), "content": .string(content)] }
}

/// Something in a skills directory that is not published: the path and, in one sentence, what is
/// wrong and what to do about it.
package struct SkillRejection: Error, Sendable, Equatable, CustomStringConvertible {
    let path: String
    let reason: String
    package var description: String { "\(path): \(reason)" }
}

package struct SkillScan: Sendable, Equatable {
    /// In name order, within the count and size budgets.
    package var skills: [NodeSkill] = []
    package var rejected: [SkillRejection] = []

    /// `node.skills.update` params: a closed `{skills: [{name, description, content}]}`.
    package var params: JSONValue { ["skills": .array(skills.map(\.descriptor))] }
}

/// Reads the skills directories by the gateway's rules: `<dir>/<name>/SKILL.md`, dot-directories
/// skipped, a SKILL.md directly in a skills directory refused, frontmatter `name` equal to the
/// folder's name and within the name rule, a `description` of 1–1024 characters, content of
/// 1–64 KiB; at most 64 skills and 512 KiB in all, taken in name order.
///
/// Files are read relative to directory descriptors, never through a symbolic link below the
/// skills directory (O_NOFOLLOW / AT_SYMLINK_NOFOLLOW), and their size is checked before reading:
/// what is published goes into an agent's context, so a link to a file elsewhere (~/.ssh) or a
/// device must not be read. A folder or SKILL.md others may write is refused too: anyone on the
/// machine could put words into the agent's instructions.
package enum SkillCatalog {
    static let maxSkills = 64
    static let maxDescription = 1024
    static let maxContentBytes = 65_536
    package static let maxTotalBytes = 512 * 1024
    static let fileName = "SKILL.md"

    package static func scan(_ sources: SkillSources) -> SkillScan {
        var out = SkillScan()
        var found: [String: NodeSkill] = [:]
        for (i, root) in sources.roots.enumerated() {
            read(root: root, required: i > 0, into: &found, rejected: &out.rejected)
        }
        var total = 0
        for name in found.keys.sorted() {
            let skill = found[name]!
            let bytes = skill.content.utf8.count
            if out.skills.count == maxSkills {
                out.rejected.append(.init(path: skill.directory, reason: "more than \(maxSkills) skills: this one (in name order) is not published; remove skills you do not need"))
            } else if total + bytes > maxTotalBytes {
                out.rejected.append(.init(path: skill.directory, reason: "its \(bytes) bytes do not fit in the \(maxTotalBytes / 1024) KiB all skills may take together (\(total) used before it, in name order): shorten skills or remove some"))
            } else {
                out.skills.append(skill)
                total += bytes
            }
        }
        return out
    }

    /// One skills directory. `required`: a configured directory, whose absence is said; the state
    /// directory's `skills` may simply not exist.
    private static func read(root: String, required: Bool, into found: inout [String: NodeSkill], rejected: inout [SkillRejection]) {
        guard root.hasPrefix("/") else {
            rejected.append(.init(path: root, reason: "skills.dirs entries must be absolute paths or start with ~/; fix the config"))
            return
        }
        // The directory itself may be a symbolic link: the config (or the state directory) names
        // it, so it is the operator's choice — as long as the link, and every directory on the way,
        // is the node's account's or root's (FileTrust.walk). Nothing below it is followed.
        let real: String
        switch FileTrust.walk(root) {
        case .success(let (path, _)): real = path
        case .failure(let why):
            if !FileSystem.exists(root) {
                if required { rejected.append(.init(path: root, reason: "cannot open the skills directory (no such directory); create it or remove it from skills.dirs")) }
                return
            }
            rejected.append(.init(path: root, reason: "no skill in it is published: \(why.description)"))
            return
        }
        let rootFD = open(real, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard rootFD >= 0 else {
            if errno == ENOENT && !required { return }
            rejected.append(.init(path: root, reason: "cannot open the skills directory (\(String(cString: strerror(errno)))); create it or remove it from skills.dirs"))
            return
        }
        defer { close(rootFD) }
        var st = stat()
        guard fstat(rootFD, &st) == 0 else { return }
        if let why = othersMayWrite(st, directory: true, path: real) {
            rejected.append(.init(path: real, reason: "no skill in it is published: \(why)"))
            return
        }
        for name in entries(rootFD).sorted() where !name.hasPrefix(".") {
            let path = PathName.join(real, name)
            if name == fileName {
                rejected.append(.init(path: path, reason: "a SKILL.md directly in the skills directory is not a skill; move it into a folder named after the skill (\(PathName.join(real, "<name>/SKILL.md")))"))
                continue
            }
            guard fstatat(rootFD, name, &st, AT_SYMLINK_NOFOLLOW) == 0 else { continue }
            let kind = st.st_mode & S_IFMT
            if kind == S_IFLNK {
                rejected.append(.init(path: path, reason: "is a symbolic link; skills are read only from real folders inside the skills directory: copy or move the skill there"))
                continue
            }
            guard kind == S_IFDIR else { continue }  // other files beside the skills (a README) are not skills
            switch readSkill(rootFD, name, path: path) {
            case .success(let skill):
                if let earlier = found[skill.name] {
                    rejected.append(.init(path: path, reason: "a skill named \(skill.name) is already published from \(earlier.directory); rename one of them"))
                } else {
                    found[skill.name] = skill
                }
            case .failure(let r):
                rejected.append(r)
            }
        }
    }

    private static func readSkill(_ rootFD: Int32, _ name: String, path: String) -> Result<NodeSkill, SkillRejection> {
        func refuse(_ why: String) -> Result<NodeSkill, SkillRejection> { .failure(.init(path: path, reason: why)) }
        let dirFD = openat(rootFD, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard dirFD >= 0 else { return refuse("cannot open the folder (\(String(cString: strerror(errno))))") }
        defer { close(dirFD) }
        var st = stat()
        guard fstat(dirFD, &st) == 0 else { return refuse("cannot stat the folder") }
        if let why = othersMayWrite(st, directory: true, path: path) { return refuse(why) }
        let filePath = PathName.join(path, fileName)
        let fd = openat(dirFD, fileName, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else {
            switch errno {
            case ENOENT: return refuse("has no SKILL.md; add one (frontmatter name: \(name) and description:) or remove the folder")
            case ELOOP: return refuse("SKILL.md is a symbolic link; put the file itself in the folder")
            default: return refuse("cannot open SKILL.md (\(String(cString: strerror(errno))))")
            }
        }
        defer { close(fd) }
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG else { return refuse("SKILL.md is not a regular file") }
        if let why = othersMayWrite(st, directory: false, path: filePath) { return refuse(why) }
        guard st.st_size > 0 else { return refuse("SKILL.md is empty; write the skill's frontmatter and instructions") }
        guard st.st_size <= maxContentBytes else {
            return refuse("SKILL.md is \(st.st_size) bytes, more than the \(maxContentBytes / 1024) KiB a skill may have; shorten it or move detail into other files of the folder")
        }
        // One byte more than the cap: a file that grew since fstat is still refused, never cut.
        let bytes = FileSystem.read(fd, upTo: maxContentBytes + 1)
        let used = bytes.count
        guard used <= maxContentBytes else { return refuse("SKILL.md grew past \(maxContentBytes / 1024) KiB while being read; shorten it") }
        guard used > 0 else { return refuse("SKILL.md is empty; write the skill's frontmatter and instructions") }
        guard let content = String(validating: bytes[0..<used], as: UTF8.self) else { return refuse("SKILL.md is not UTF-8 text; save it as UTF-8") }
        return check(content, folder: name).map { checked in
            NodeSkill(name: name, description: checked.description, content: content, directory: path)
        }.mapError { SkillRejection(path: filePath, reason: $0.reason) }
    }

    /// What is wrong with a SKILL.md's text and what to do about it.
    struct RuleViolation: Error, Equatable { let reason: String }

    /// The rules on the text alone: frontmatter, name, description. Returns the name and
    /// description, or what is wrong and what to do.
    static func check(_ content: String, folder: String) -> Result<(name: String, description: String), RuleViolation> {
        func fail(_ why: String) -> Result<(name: String, description: String), RuleViolation> { .failure(RuleViolation(reason: why)) }
        let fm: SkillFrontmatter
        do { fm = try SkillFrontmatter.parse(content) } catch {
            return fail("\(error); start the file with ---, name: \(folder), description: …, ---")
        }
        guard let name = fm["name"], !name.isEmpty else { return fail("its frontmatter has no name; add name: \(folder)") }
        guard name == folder else {
            return fail("its frontmatter name \"\(name)\" is not its folder's name \"\(folder)\"; make them the same")
        }
        guard SkillName.isValid(name) else {
            return fail("\"\(name)\" is not a valid skill name (1–64 lower-case letters, digits and single hyphens, starting and ending with a letter or digit); rename the folder and the name")
        }
        guard let description = fm["description"]?.trimmed(), !description.isEmpty else {
            return fail("its frontmatter has no description; add description: with one line saying when to use the skill")
        }
        let chars = description.unicodeScalars.count
        guard chars <= maxDescription else {
            return fail("its description has \(chars) characters, more than \(maxDescription); shorten it")
        }
        return .success((name, description))
    }

    /// Why a file or folder cannot be published (nil: fine): the plugins' trust rule. What a skill
    /// says goes into an agent's instructions, so it must belong to root or the node's account, and
    /// nobody else may write it — not every account, not a group with other members (a shared team
    /// folder is one more way in), not through a sticky directory where anyone may add a folder.
    private static func othersMayWrite(_ st: stat, directory: Bool, path: String) -> String? {
        let me = geteuid()
        if st.st_uid != 0 && st.st_uid != me {
            return "it belongs to uid \(st.st_uid), not root or the node's account (uid \(me)), so that account decides what the agent is told; run chown \(me) \(path)"
        }
        let mode = st.st_mode & 0o7777
        if directory && mode & S_ISVTX != 0 && mode & 0o022 != 0 {
            return "it is a shared sticky directory (mode \(mode.octal())): any account may add a skill folder to it; use a directory only the node's account writes"
        }
        if let who = FileTrust.writers(st, isDirectory: directory) {
            return "it is writable by \(who) (mode \(mode.octal())), so they could change what the agent is told; run chmod go-w \(path)"
        }
        return nil
    }

    /// The names in the directory `fd` refers to (the descriptor stays open).
    static func entries(_ fd: Int32) -> [String] {
        let copy = dup(fd)
        guard copy >= 0, let dir = fdopendir(copy) else { if copy >= 0 { close(copy) }; return [] }
        defer { closedir(dir) }
        rewinddir(dir)  // the copy shares the descriptor's offset
        return FileSystem.names(in: dir)
    }
}
