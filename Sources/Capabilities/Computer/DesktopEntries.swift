import Glibc
import Kit
import Support

/// Installed applications from XDG desktop entries (the Desktop Entry Specification): the user's
/// `$XDG_DATA_HOME/applications` first, then each of `$XDG_DATA_DIRS`. An entry's id is its path
/// below `applications/` with `/` as `-`; the first directory that has an id wins — except that an
/// entry anyone but root could have written (the user's own, or one in a directory others can
/// write) never takes the id of a system entry: a planted `firefox.desktop` cannot stand in for the
/// real one (docs/SECURITY.md). Entries are regular files (symbolic links are skipped) of at most
/// 64 KiB, as upstream's Linux inventory reads them.
struct DesktopEntry: Equatable, Sendable {
    let id: String
    let label: String
    let path: String
    let exec: String?
    /// From a system data directory and categorised as a system tool or settings panel.
    let system: Bool
}

enum DesktopEntries {
    static func directories(_ env: [String: String]) -> [(path: String, system: Bool)] {
        let home = env["XDG_DATA_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? PathName.home(env) + "/.local/share"
        let dirs = (env["XDG_DATA_DIRS"].flatMap { $0.isEmpty ? nil : $0 } ?? "/usr/local/share:/usr/share")
            .split(separator: ":").map(String.init).filter { $0.hasPrefix("/") }
        return [(home + "/applications", false)] + dirs.map { ($0 + "/applications", true) }
    }

    static let maxEntryBytes = 64 * 1024

    /// Every launchable application, by id, in label order.
    static func load(_ env: [String: String], locale: String?) -> [DesktopEntry] {
        let found = directories(env).map { dir in (dir, files(in: dir.path)) }
        // Root's entries (checked once each), and the ids they hold: no other entry may take them.
        let rootFiles = Set(found.filter { $0.0.system }.flatMap { $0.1 }.map(\.path).filter(trustedAsSystem))
        let rootOwned = Set(found.flatMap { $0.1 }.filter { rootFiles.contains($0.path) }.map(\.id))
        var seen = Set<String>()
        var out: [DesktopEntry] = []
        for (dir, entries) in found {
            for (id, file) in entries where !seen.contains(id) {
                let system = dir.system && rootFiles.contains(file)
                if !system && rootOwned.contains(id) {
                    // It may hide the system's entry (a Hidden=true copy), never stand in for it.
                    let shown = read(file).flatMap { parse($0, id: id, path: file, systemDir: false, locale: locale, env: env) }
                    if shown == nil { seen.insert(id) }
                    continue
                }
                seen.insert(id)
                guard let text = read(file),
                      let entry = parse(text, id: id, path: file, systemDir: system, locale: locale, env: env) else { continue }
                out.append(entry)
            }
        }
        return out.sorted { $0.label.lowercased() < $1.label.lowercased() }
    }

    /// Written by root alone: the file and every directory above it root's, none writable by others.
    static func trustedAsSystem(_ file: String) -> Bool { FileTrust.problem(file, rootOnly: true) == nil }

    /// The text of a regular file (not a symbolic link) of at most 64 KiB.
    static func read(_ file: String) -> String? {
        var st = stat()
        guard lstat(file, &st) == 0, st.st_mode & S_IFMT == S_IFREG, st.st_size <= maxEntryBytes else { return nil }
        return FileSystem.readText(file)
    }

    /// `*.desktop` files below `dir`, with their ids.
    static func files(in dir: String, prefix: String = "") -> [(id: String, path: String)] {
        guard let names = try? FileSystem.contentsOfDirectory(dir) else { return [] }
        var out: [(String, String)] = []
        for name in names.sorted() {
            let full = dir + "/" + name
            var st = stat()
            guard stat(full, &st) == 0 else { continue }
            if st.st_mode & S_IFMT == S_IFDIR { out += files(in: full, prefix: prefix + name + "-") }
            else if name.hasSuffix(".desktop") { out.append((prefix + String(name.dropLast(8)), full)) }
        }
        return out
    }

    /// nil for entries that are not shown applications (Hidden, NoDisplay, not Type=Application,
    /// a TryExec that is not installed, no Name).
    static func parse(_ text: String, id: String, path: String, systemDir: Bool, locale: String?,
                      env: [String: String]) -> DesktopEntry? {
        var inMain = false
        var keys: [String: String] = [:]
        for rawLine in text.split(separator: "\n", omittingEmptySubsequences: true) {
            let line = rawLine.trimmed()
            if line.hasPrefix("#") || line.isEmpty { continue }
            if line.hasPrefix("[") { inMain = line == "[Desktop Entry]"; continue }
            guard inMain, let eq = line.firstIndex(of: "=") else { continue }
            let key = line[..<eq].trimmed()
            if keys[key] == nil { keys[key] = unescape(line[line.index(after: eq)...].trimmed()) }
        }
        guard keys["Type"] == "Application", keys["Hidden"] != "true", keys["NoDisplay"] != "true" else { return nil }
        if let tryExec = keys["TryExec"], !tryExec.isEmpty {
            let found = tryExec.hasPrefix("/") ? Subprocess.isExecutableFile(tryExec)
                : Subprocess.findExecutable(tryExec, path: env["PATH"] ?? "/usr/bin:/bin") != nil
            guard found else { return nil }
        }
        guard let label = localized("Name", keys, locale), !label.isEmpty else { return nil }
        let categories = (keys["Categories"] ?? "").split(separator: ";").map(String.init)
        let system = systemDir && categories.contains { ["System", "Settings", "Monitor", "PackageManager"].contains($0) }
        return DesktopEntry(id: id, label: label, path: path, exec: keys["Exec"], system: system)
    }

    /// Name[ll_CC], then Name[ll], then Name, for a locale such as "de_DE.UTF-8@euro".
    static func localized(_ key: String, _ keys: [String: String], _ locale: String?) -> String? {
        if let locale, !locale.isEmpty, locale != "C", locale != "POSIX" {
            let base = locale.split(separator: ".").first.map(String.init) ?? locale
            let plain = base.split(separator: "@").first.map(String.init) ?? base
            let lang = plain.split(separator: "_").first.map(String.init) ?? plain
            for candidate in [plain, lang] { if let v = keys["\(key)[\(candidate)]"] { return v } }
        }
        return keys[key]
    }

    private static func unescape(_ s: String) -> String {
        guard s.contains("\\") else { return s }
        var out = ""
        var escaped = false
        for c in s {
            if escaped {
                switch c { case "s": out.append(" "); case "n": out.append("\n"); case "t": out.append("\t"); case "r": out.append("\r"); default: out.append(c) }
                escaped = false
            } else if c == "\\" { escaped = true } else { out.append(c) }
        }
        return out
    }
}
