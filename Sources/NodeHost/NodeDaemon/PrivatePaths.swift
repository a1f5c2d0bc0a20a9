import Config
import Kit
import Support

/// What no capability may show or hand out, whatever its settings (the files policy, the
/// sandbox's hidden paths): the state directory, the config file — and what would give the config
/// away beside it (an editor's backup `config.json5~`, `.config.json5.swp`, `config.json5.bak`, the
/// other of the user and system config files, the whole directory when it is the node's own
/// `openclaw-node` folder; ConfigSiblings; the drop-ins' config.d) — and files the manifests mark hidden (the desktop's VNC
/// password file). Only existing
/// files are listed (bwrap can hide only what exists); directories are hidden whole.
enum PrivatePaths {
    static func of(_ config: NodeConfig) -> (directories: [String], files: [String]) {
        var dirs = [config.stateDir]
        var files: [String] = []
        var configs = [ConfigLoader.systemConfigFile]
        if let source = config.sourceFile { configs.append(source) }
        for file in configs where FileSystem.exists(file) {
            let dir = PathName.directory(file)
            if PathName.lastComponent(dir) == "openclaw-node" { dirs.append(dir); continue }
            files.append(file)  // its siblings are covered where it is used (ConfigSiblings)
            // Its drop-ins may hold the gateway token as well.
            if FileSystem.isDirectory(ConfigDropIns.directory(for: file)) { dirs.append(ConfigDropIns.directory(for: file)) }
        }
        // Keys the bundles' manifests mark `hidden: true` (a VNC password file): named by the
        // manifests, not here.
        for bundle in config.catalog.manifests {
            for field in bundle.config where field.hiddenFile {
                guard let named = config.capability(bundle.name).string(field.key), !named.isEmpty else { continue }
                let path = NodeConfig.expandHome(named, ProcessEnvironment.current)
                if FileSystem.exists(path) { files.append(path) }
            }
        }
        return (Array(Set(dirs)).sorted(), Array(Set(files)).sorted())
    }
}
