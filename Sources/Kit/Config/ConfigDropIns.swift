import Support

/// Config drop-ins: `config.d/*.json5` beside the main file (`/etc/openclaw-node/config.d/` for
/// `/etc/openclaw-node/config.json5`, `~/.config/openclaw-node/config.d/` for the user's), read in
/// name order (byte order, as run-parts and systemd sort them) and merged over the main file. A
/// fleet ships one setting per file (`10-gateway.json5`, `50-kiosk.json5`) without editing the file
/// the package owns.
///
/// Merge rule: objects merge key by key, all the way down; any other value (a string, a number, an
/// array) replaces the one before it. So `skills.dirs` in a drop-in replaces the main file's list —
/// the rule systemd's drop-ins follow for a value set twice, and the only one that lets a drop-in
/// shorten a list.
public enum ConfigDropIns {
    /// The folder whose files are merged over `mainFile`.
    public static func directory(for mainFile: String) -> String {
        let dir = PathName.directory(mainFile)
        return dir.isEmpty ? "config.d" : dir == "/" ? "/config.d" : dir + "/config.d"
    }

    /// The drop-ins of `mainFile` that exist, in the order they apply. Only `*.json5` counts: an
    /// editor's backup (`10-gw.json5~`, `.10-gw.json5.swp`), a `.dpkg-old` or a README beside them is
    /// not read — nor a hidden file, which is how a drop-in is switched off without deleting it.
    public static func files(for mainFile: String) -> [String] {
        let dir = directory(for: mainFile)
        guard FileSystem.isDirectory(dir), let names = try? FileSystem.contentsOfDirectory(dir) else { return [] }
        return names.filter { $0.hasSuffix(".json5") && !$0.hasPrefix(".") && $0 != ".json5" }
            .sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
            .map { dir + "/" + $0 }
            .filter { FileSystem.isRegularFile($0) }
    }

    /// `top` laid over `base` by the rule above. Every value keeps the file and position it was
    /// read from, so an error in the merged tree names the drop-in that set the value.
    public static func merge(_ base: JSON5Node, _ top: JSON5Node) -> JSON5Node {
        guard case .object(var members) = base.kind, case .object(let over) = top.kind else { return top }
        for m in over {
            // JSON5 lets a key repeat; the last one counts (as `plain` has it), so that is the one merged into.
            if let i = members.lastIndex(where: { $0.key == m.key }) {
                members[i] = JSON5Node.Member(key: m.key, keyLocation: m.keyLocation, value: merge(members[i].value, m.value))
            } else {
                members.append(m)
            }
        }
        return JSON5Node(.object(members), at: base.location, file: base.file)
    }
}
