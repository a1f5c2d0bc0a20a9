import Config
import Glibc
import Kit
import Registry
import Support

/// `plugin.json5` in a plugin directory (Plugins/README.md documents the format).
public struct PluginManifest: Sendable, Equatable {
    public struct Command: Sendable, Equatable {
        public let name: String
        public let requiresForeground: Bool
        public let dangerous: Bool
        public let permission: String?
        public let summary: String
        /// What gateways do with it on platform linux (newest, and before 2026.7.2).
        public let gateway: BundleManifest.GatewayPolicy
        public let olderGateway: BundleManifest.GatewayPolicy
    }

    public let id: String
    public let version: String
    /// Absolute path of the executable (relative names resolve against the plugin directory).
    public let executable: String
    public let args: [String]
    /// The `caps` entry its commands are advertised under.
    public let capability: String
    public let commands: [Command]
    public let directory: String
    /// `directory` with its links resolved, each checked (FileTrust.walk): where it runs.
    public let realDirectory: String

    public struct Invalid: Error, CustomStringConvertible { public let description: String }

    /// A relative `executable` must stay inside the plugin's directory (symlinks resolved); an
    /// absolute one (an interpreter such as /usr/bin/python3) is taken as it is. Either way the
    /// file must pass the trust rule.
    static func executablePath(_ exe: String, directory: String, file: String) throws(Invalid) -> String {
        let path: String
        if exe.hasPrefix("/") {
            path = exe
        } else {
            let dir = PathName.resolvingSymlinks(directory)
            path = PathName.resolvingSymlinks(PathName.join(dir, exe))
            guard PathName.isWithin(dir, path), path != dir else {
                throw Invalid(description: "\(file): executable \"\(exe)\" leaves the plugin's directory (\(path)); put the program inside \(directory) or name an absolute path")
            }
        }
        if let why = FileTrust.problem(path) { throw Invalid(description: "\(file): refused executable \(path): \(why)") }
        return path
    }

    /// The trust rule of bundles applied to plugins (docs/SECURITY.md): the directory, the
    /// manifest and the executable — each with every directory above it — belong to root or the
    /// node's account and are not writable by group or others.
    public static func load(directory: String) throws(Invalid) -> PluginManifest {
        let file = directory + "/plugin.json5"
        // The way there first, links included: a link another account owns could be repointed.
        let real: String
        switch FileTrust.walk(directory) {
        case .failure(let why): throw Invalid(description: "refused plugin \(directory): \(why.description)")
        case .success(let (path, _)): real = path
        }
        if let why = FileTrust.directoryProblem(real) { throw Invalid(description: "refused plugin \(directory): \(why)") }
        if let why = FileTrust.problem(file) { throw Invalid(description: "refused plugin \(directory): \(why)") }
        guard let text = FileSystem.readText(file) else { throw Invalid(description: "\(file): cannot read") }
        let v: JSONValue
        do { v = try JSON5Parser.parse(text, file: file).plain } catch { throw Invalid(description: error.description) }
        func str(_ k: String) throws(Invalid) -> String {
            guard let s = v[k]?.stringValue, !s.isEmpty else { throw Invalid(description: "\(file): \"\(k)\" (a string) is required") }
            return s
        }
        let id = try str("id")
        guard id.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == "." }) else {
            throw Invalid(description: "\(file): id may contain only letters, digits, '-', '_' and '.'")
        }
        let exe = try str("executable")
        let capability = v["capability"]?.stringValue ?? id
        guard let list = v["commands"]?.arrayValue, !list.isEmpty else { throw Invalid(description: "\(file): \"commands\" must list at least one command") }
        var commands: [Command] = []
        for (i, c) in list.enumerated() {
            guard let name = c["name"]?.stringValue, name.contains(".") else {
                throw Invalid(description: "\(file): commands[\(i)].name must look like \"family.action\"")
            }
            func policy(_ key: String) throws(Invalid) -> BundleManifest.GatewayPolicy {
                guard let text = c[key]?.stringValue else { return .allowlist }
                guard let p = BundleManifest.GatewayPolicy(rawValue: text) else {
                    throw Invalid(description: "\(file): commands[\(i)].\(key) must be one of \(BundleManifest.GatewayPolicy.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                return p
            }
            commands.append(Command(name: name, requiresForeground: c["requiresForeground"]?.boolValue ?? false,
                                    dangerous: c["dangerous"]?.boolValue ?? false, permission: c["permission"]?.stringValue,
                                    summary: c["summary"]?.stringValue ?? "plugin \(id)",
                                    gateway: try policy("gateway"), olderGateway: try policy("olderGateway")))
        }
        let args = v["args"]?.arrayValue?.compactMap(\.stringValue) ?? []
        // A script handed to an interpreter is code as much as the executable is.
        for arg in args where !arg.hasPrefix("-") {
            let path = arg.hasPrefix("/") ? arg : PathName.join(real, arg)
            var st = stat()
            guard stat(path, &st) == 0, st.st_mode & S_IFMT == S_IFREG else { continue }
            if let why = FileTrust.problem(path) { throw Invalid(description: "\(file): refused script \(path): \(why)") }
        }
        return PluginManifest(id: id, version: v["version"]?.stringValue ?? "0", executable: try executablePath(exe, directory: directory, file: file),
                              args: args, capability: capability,
                              commands: commands, directory: directory, realDirectory: real)
    }
}
