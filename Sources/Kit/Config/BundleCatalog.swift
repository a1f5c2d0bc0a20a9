import Glibc
import Support

/// The capabilities this installation has, from their manifests alone: the core's built-in one
/// and every `libopenclaw-<name>.manifest.json5` in the installation's own library directories
/// (beside the executable, and `../lib/openclaw-node`; never the working directory or
/// LD_LIBRARY_PATH). Reading it opens no library, so a one-shot command (`--help`, `config check`,
/// `caps`) costs a directory listing and a few small files. A manifest decides gates (foreground,
/// dangerous), so it passes the same ownership rule as the library; a refused or malformed one is
/// left out with the reason in `refused`, which `--version`, `caps` and doctor show.
public struct BundleCatalog: Sendable {
    public let manifests: [BundleManifest]
    public let refused: [(name: String, file: String, reason: String)]

    public init(manifests: [BundleManifest], refused: [(name: String, file: String, reason: String)] = []) {
        self.manifests = manifests
        self.refused = refused
    }

    /// This process's installation, read once.
    public static let current = BundleCatalog.scan(searchDirectories)

    public func named(_ name: String) -> BundleManifest? { manifests.named(name) }
    /// The row of `command` in whichever manifest declares it.
    public func command(_ command: String) -> BundleManifest.Command? {
        for m in manifests { if let row = m.commands.first(where: { $0.name == command }) { return row } }
        return nil
    }
    public var names: [String] { manifests.map(\.name) }
    /// The manifests of bundles with a library (all but the built-in one).
    public var bundles: [BundleManifest] { manifests.filter { $0.library != nil } }
    /// One line per refused manifest, as `caps` lists what it does not advertise.
    public var refusedReasons: [String] { refused.map { "\($0.name): \($0.reason)" } }

    /// The executable's directory and `../lib/openclaw-node` beside it, from /proc/self/exe.
    public static var searchDirectories: [String] {
        guard let exe = try? FileSystem.destinationOfSymbolicLink("/proc/self/exe") else { return [] }
        let bin = PathName.directory(exe)
        return [bin, PathName.join(PathName.directory(bin), "lib/openclaw-node")]
    }

    /// The directory of `searchDirectories` that holds `file` (a bundle's library, or a helper
    /// library installed beside the bundles), nil when none does.
    public static func directory(holding file: String) -> String? {
        searchDirectories.first { FileSystem.exists(PathName.join($0, file)) }
    }

    /// The built-in manifest plus the manifests in `directories` (the first directory that has a
    /// name wins), sorted by name after the built-in one.
    public static func scan(_ directories: [String]) -> BundleCatalog {
        var found: [String: BundleManifest] = [:]
        var refused: [(String, String, String)] = []
        for dir in directories {
            let files = ((try? FileSystem.contentsOfDirectory(dir)) ?? []).sorted()
            for f in files where f.hasPrefix("libopenclaw-") && f.hasSuffix(".manifest.json5") {
                let name = String(f.dropFirst("libopenclaw-".count).dropLast(".manifest.json5".count))
                guard found[name] == nil, name != BuiltInManifest.device.name else { continue }
                switch read(PathName.join(dir, f), name: name) {
                case .success(let m): found[name] = m
                case .failure(let why): refused.append((name, PathName.join(dir, f), why.description))
                }
            }
        }
        return BundleCatalog(manifests: [BuiltInManifest.device] + found.values.sorted { $0.name < $1.name }, refused: refused)
    }

    /// Reads one manifest file (trust rule first).
    public static func read(_ path: String, name: String) -> Result<BundleManifest, BundleManifestReader.Invalid> {
        if let problem = FileTrust.problem(path) {
            return .failure(.init(problems: ["\(path): refused manifest: \(problem)"]))
        }
        guard let data = FileSystem.readBytes(path), let text = String(validating: data, as: UTF8.self) else {
            return .failure(.init(problems: ["\(path): cannot read the manifest (not readable, or not UTF-8)"]))
        }
        do {
            return .success(try BundleManifestReader.read(text, file: path, expectedName: name,
                                                          library: "libopenclaw-\(name).so"))
        } catch { return .failure(error) }
    }
}
