import Glibc

/// One installed application: a desktop entry that passed every rule of the inventory, with the
/// native program it starts. (In Support because two bundles read it: the computer bundle lists and
/// launches applications, the system bundle binds a system.run plan to one.)
public struct DesktopEntry: Equatable, Sendable {
    /// `linux-desktop:<file name>`, as upstream's Linux hosts name it.
    public let appId: String
    /// Changes whenever the entry or its program changes (DesktopEntries.revision).
    public let appRevision: String
    public let label: String
    public let path: String
    /// The resolved absolute path of the program (realpath), an ELF executable.
    public let executable: String
    /// From a system data directory ($XDG_DATA_DIRS), not the user's own ($XDG_DATA_HOME).
    public let system: Bool
}

/// Installed applications from XDG desktop entries, by upstream's Linux inventory rules (so the
/// gateway's app_list/app_launch read the same rows from this node as from upstream's hosts):
/// roots `$XDG_DATA_HOME/applications` then each of `$XDG_DATA_DIRS`; top-level `*.desktop` files
/// only, at most 2048 directory entries in all; the first root holding a file name owns it;
/// regular files (lstat, opened without following links) of at most 64 KiB; exactly one
/// `[Desktop Entry]` group; an `Exec` that is one native program. Beyond upstream: an entry anyone
/// but root could have written never takes the name of a root-owned system entry, so a planted
/// `firefox.desktop` cannot stand in for the real one (docs/SECURITY.md).
public enum DesktopEntries {
    static let maxEntryBytes = 64 * 1024
    static let maxDirectoryEntries = 2048

    public struct Inventory: Sendable {
        /// In label order, then path.
        public let entries: [DesktopEntry]
        /// False when the directory-entry budget ran out before every root was read.
        public let complete: Bool
    }

    static func roots(_ env: [String: String]) -> [(path: String, system: Bool)] {
        let home = env["XDG_DATA_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? PathName.home(env) + "/.local/share"
        let dirs = (env["XDG_DATA_DIRS"].flatMap { $0.isEmpty ? nil : $0 } ?? "/usr/local/share:/usr/share")
            .split(separator: ":").map(String.init).filter { $0.hasPrefix("/") }
        var seen = Set<String>()
        return ([(home, false)] + dirs.map { ($0, true) }).compactMap { dir, system in
            seen.insert(dir).inserted ? (dir + "/applications", system) : nil
        }
    }

    public static func load(_ env: [String: String], locale: String?) -> Inventory {
        var budget = maxDirectoryEntries
        var complete = true
        var found: [(root: (path: String, system: Bool), names: [String])] = []
        for root in roots(env) {
            guard let names = try? FileSystem.contentsOfDirectory(root.path) else { continue }
            let sorted = names.sorted()
            if sorted.count > budget { complete = false }
            let visited = Array(sorted.prefix(budget))
            budget -= visited.count
            found.append((root, visited.filter { $0.hasSuffix(".desktop") }))
            if budget == 0 { break }
        }
        // The names root-owned system entries hold: no entry another account could write takes them.
        var rootOwned = Set<String>()
        for (root, names) in found where root.system {
            for name in names where FileTrust.problem(root.path + "/" + name, rootOnly: true) == nil { rootOwned.insert(name) }
        }
        var owned = Set<String>()
        var out: [DesktopEntry] = []
        let path = env["PATH"].flatMap { $0.isEmpty ? nil : $0 } ?? "/usr/local/bin:/usr/bin:/bin"
        for (root, names) in found {
            for name in names {
                let file = root.path + "/" + name
                guard !owned.contains(name) else { continue }
                let found = entry(file: file, name: name, system: root.system, locale: locale, searchPath: path)
                let trustedSystem = root.system && FileTrust.problem(file, rootOnly: true) == nil
                if rootOwned.contains(name) && !trustedSystem {
                    // Another account's entry may hide a root-owned one (a Hidden=true copy), never stand in for it.
                    if found == nil { owned.insert(name) }
                    continue
                }
                // The first root with the name owns it, even when its entry is invalid (masking).
                owned.insert(name)
                if let found { out.append(found) }
            }
        }
        out.sort { ($0.label, $0.path) < ($1.label, $1.path) }
        return Inventory(entries: out, complete: complete)
    }

    /// The application of one file, or nil when any rule refuses it.
    static func entry(file: String, name: String, system: Bool, locale: String?, searchPath: String) -> DesktopEntry? {
        let appId = "linux-desktop:" + name
        guard isValidAppId(appId), let text = read(file), let keys = parse(text),
              let label = label(keys, locale: locale), let exec = keys["Exec"], let token = singleToken(exec),
              let program = resolve(token, searchPath: searchPath) else { return nil }
        guard let revision = revision(entryFile: file, entryText: text, executable: program) else { return nil }
        return DesktopEntry(appId: appId, appRevision: revision, label: label, path: file, executable: program, system: system)
    }

    /// `^linux-desktop:[A-Za-z0-9_.-]+\.desktop$`.
    static func isValidAppId(_ id: String) -> Bool {
        guard id.hasPrefix("linux-desktop:"), id.hasSuffix(".desktop") else { return false }
        let name = id.dropFirst("linux-desktop:".count).dropLast(".desktop".count)
        return !name.isEmpty && name.utf8.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c == 0x5f || c == 0x2e || c == 0x2d
        }
    }

    /// The text of a regular file (lstat, and opened with O_NOFOLLOW) of at most 64 KiB.
    static func read(_ file: String) -> String? {
        var st = stat()
        guard lstat(file, &st) == 0, st.st_mode & S_IFMT == S_IFREG, st.st_size <= maxEntryBytes else { return nil }
        let fd = open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        let bytes = FileSystem.read(fd, upTo: maxEntryBytes + 1)
        guard bytes.count <= maxEntryBytes else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The keys of the one `[Desktop Entry]` group, or nil when the file breaks a rule: another
    /// group, a duplicate key, a line that is not `key=value`, not `Type=Application`, a flag
    /// (`Hidden`, `NoDisplay`, `Terminal`, `DBusActivatable`) other than `false`, or any of
    /// `Path`, `TryExec`, `OnlyShowIn`, `NotShowIn`.
    static func parse(_ text: String) -> [String: String]? {
        var groups = 0
        var keys: [String: String] = [:]
        for rawLine in text.split(omittingEmptySubsequences: true, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            let line = rawLine.trimmed()
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("[") {
                guard line == "[Desktop Entry]", groups == 0 else { return nil }
                groups += 1
                continue
            }
            guard groups == 1, let eq = line.firstIndex(of: "="), eq > line.startIndex else { return nil }
            let key = line[..<eq].trimmed()
            guard !key.isEmpty, keys[key] == nil else { return nil }
            keys[key] = line[line.index(after: eq)...].trimmed()
        }
        guard groups == 1, keys["Type"] == "Application" else { return nil }
        for flag in ["Hidden", "NoDisplay", "Terminal", "DBusActivatable"] where keys[flag] != nil && keys[flag] != "false" { return nil }
        for refused in ["Path", "TryExec", "OnlyShowIn", "NotShowIn"] where keys[refused] != nil { return nil }
        return keys
    }

    /// Name[ll_CC], then Name[ll], then Name (for a locale such as "de_DE.UTF-8@euro"), unescaped;
    /// nil without a Name or with an escape other than \s \n \t \r \\.
    static func label(_ keys: [String: String], locale: String?) -> String? {
        guard keys["Name"] != nil else { return nil }
        var value = keys["Name"]
        if let locale, !locale.isEmpty, locale != "C", locale != "POSIX" {
            let base = locale.split(separator: ".").first.map(String.init) ?? locale
            let plain = base.split(separator: "@").first.map(String.init) ?? base
            let lang = plain.split(separator: "_").first.map(String.init) ?? plain
            if let v = [plain, lang].lazy.compactMap({ keys["Name[\($0)]"] }).first { value = v }
        }
        guard let value, let label = unescape(value), !label.isEmpty else { return nil }
        return label
    }

    static func unescape(_ s: String) -> String? {
        guard s.contains("\\") else { return s }
        var out = ""
        var escaped = false
        for c in s {
            if escaped {
                switch c {
                case "s": out.append(" ")
                case "n": out.append("\n")
                case "t": out.append("\t")
                case "r": out.append("\r")
                case "\\": out.append("\\")
                default: return nil
                }
                escaped = false
            } else if c == "\\" { escaped = true } else { out.append(c) }
        }
        return escaped ? nil : out
    }

    /// An absolute path as given, or a bare name found on `searchPath`; then its real path, which
    /// must be an executable regular file that starts with the ELF magic (no scripts).
    static func resolve(_ token: String, searchPath: String) -> String? {
        let found = token.hasPrefix("/") ? token : (token.contains("/") ? nil : Subprocess.findExecutable(token, path: searchPath))
        guard let found else { return nil }
        let real = PathName.resolvingSymlinks(found)
        var st = stat()
        guard real.hasPrefix("/"), stat(real, &st) == 0, st.st_mode & S_IFMT == S_IFREG, access(real, X_OK) == 0,
              isELF(real) else { return nil }
        return real
    }

    /// Lowercase hex SHA-256 of the JSON array [real path of the entry, the entry's text, real path
    /// of the program, its st_dev, st_ino, st_size, mtime and ctime in nanoseconds (as strings)]: any change to the
    /// entry or the program changes it. Only this node compares it (the gateway echoes it back), so
    /// the recipe need only be stable here.
    static func revision(entryFile: String, entryText: String, executable: String) -> String? {
        var st = stat()
        guard stat(executable, &st) == 0 else { return nil }
        func ns(_ t: timespec) -> Int { t.tv_sec * 1_000_000_000 + t.tv_nsec }
        // The numbers as decimal strings: nanosecond times do not fit a JSON number exactly.
        let numbers = [Int(st.st_dev), Int(st.st_ino), Int(st.st_size), ns(st.st_mtim), ns(st.st_ctim)].map { JSONValue.string(String($0)) }
        let fields = JSONValue.array([.string(PathName.resolvingSymlinks(entryFile)), .string(entryText), .string(executable)] + numbers)
        return SHA256.hex(fields.jsonString())
    }

    /// The program of an Exec value that is exactly one token (upstream's grammar): unquoted with
    /// no whitespace or shell characters, or one double-quoted string whose only escapes are
    /// \" \\ \$ \`; no control characters, `%` or `=`. nil otherwise.
    public static func singleToken(_ exec: String) -> String? {
        let s = exec.trimmed()
        guard !s.isEmpty, !s.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }),
              !s.contains("%"), !s.contains("=") else { return nil }
        if s.hasPrefix("\"") {
            guard s.count >= 2, s.hasSuffix("\"") else { return nil }
            var out = "", chars = Array(s.dropFirst().dropLast())[...]
            while let c = chars.popFirst() {
                if c == "\"" { return nil }
                if c == "\\" {
                    guard let next = chars.popFirst(), "\"\\$`".contains(next) else { return nil }
                    out.append(next)
                } else { out.append(c) }
            }
            return out.isEmpty ? nil : out
        }
        let forbidden: Set<Character> = ["\"", "'", "\\", ">", "<", "~", "|", "&", ";", "$", "*", "?", "#", "(", ")", "`", " ", "\t"]
        return s.contains(where: { forbidden.contains($0) }) ? nil : s
    }

    /// Starts with the ELF magic (7F 45 4C 46): a native program, not a script.
    public static func isELF(_ path: String) -> Bool {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var magic = [UInt8](repeating: 0, count: 4)
        return Glibc.read(fd, &magic, 4) == 4 && magic == [0x7F, 0x45, 0x4C, 0x46]
    }
}
