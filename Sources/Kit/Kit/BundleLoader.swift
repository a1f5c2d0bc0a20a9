import CBundleABI
import Config
import Glibc
import Support

/// Finds, checks and loads bundles: `libopenclaw-<name>.so` from the installation's own library
/// directory, never from the working directory, LD_LIBRARY_PATH or a path another user could write.
/// Each bundle is opened at most once per process and never closed (Swift type metadata cannot be
/// unloaded). Every failure is a sentence saying what to do; nothing here can take the process down
/// short of a bundle whose own initialisers crash.
public enum BundleLoader {
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public let description: String
    }

    public static func fileName(_ name: String) -> String { "libopenclaw-\(name).so" }

    /// The bundle ABI this core speaks.
    public static var abi: UInt32 { OPENCLAW_NODE_BUNDLE_ABI }

    private static let loaded = Locked<[String: Result<BundleExports, Failure>]>([:])
    private static let log = Logger(component: "bundles")

    /// The exports of the capability bundle `manifest` describes (its library beside it), loading
    /// it on first use. A refusal is logged once, as a warning.
    public static func load(_ manifest: BundleManifest) -> Result<BundleExports, Failure> {
        load(manifest.name, in: [PathName.directory(manifest.file)], packages: manifest.depends + manifest.recommends)
    }

    /// The exports of the library `libopenclaw-<name>.so` in the search directories (the video and
    /// X11 helper libraries, which are not capabilities).
    public static func load(_ name: String) -> Result<BundleExports, Failure> {
        load(name, in: BundleCatalog.searchDirectories, packages: [])
    }

    private static func load(_ name: String, in directories: [String], packages: [String]) -> Result<BundleExports, Failure> {
        loaded.withLock { loaded in
            if let done = loaded[name] { return done }
            let result = open(name, in: directories, packages: packages)
            switch result {
            case .success: log.debug("loaded \(fileName(name))")
            case .failure(let f): log.warn(f.description)
            }
            loaded[name] = result
            return result
        }
    }

    static func open(_ name: String, in directories: [String], packages: [String] = []) -> Result<BundleExports, Failure> {
        let file = fileName(name)
        guard let path = directories.map({ PathName.join($0, file) })
            .first(where: { FileSystem.exists($0) }) else {
            return .failure(Failure(description: "\(name): bundle \(file) is not installed (looked in \(directories.joined(separator: ", "))); reinstall openclaw-node or disable capabilities.\(name)"))
        }
        if let problem = FileTrust.problem(path) {
            return .failure(Failure(description: "\(name): refused bundle \(path): \(problem)"))
        }
        // What the bundle links is found beside it ($ORIGIN): every libopenclaw-*.so there is
        // code this process would run, so each must pass the same rule.
        let dir = PathName.directory(path)
        for lib in ((try? FileSystem.contentsOfDirectory(dir)) ?? []).sorted()
        where lib.hasPrefix("libopenclaw-") && lib.hasSuffix(".so") && lib != file {
            if let problem = FileTrust.problem(PathName.join(dir, lib)) {
                return .failure(Failure(description: "\(name): refused bundle \(path): the library \(lib) beside it is not trustworthy: \(problem)"))
            }
        }
        guard let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL) else {
            let why = dlerror().map { String(cString: $0) } ?? "unknown error"
            // The Debian package recommends, not requires, what each bundle links: say so.
            let packageHint = packages.isEmpty ? "" : " (the bundle uses \(packages.joined(separator: ", ")))"
            let hint = !why.contains("cannot open shared object file") ? ""
                : LibraryReleaseHint.hint(forLoadError: why).map { "; " + $0 }
                    ?? "; a library it needs is not installed: install openclaw-node's recommended packages (apt install --install-recommends openclaw-node)\(packageHint) or the package that ships it, or disable capabilities.\(name)"
            return .failure(Failure(description: "\(name): cannot load bundle \(path): \(why)\(hint)"))
        }
        let entry = OPENCLAW_NODE_BUNDLE_SYMBOL_PREFIX + name
        guard let symbol = dlsym(handle, entry) else {
            return .failure(Failure(description: "\(name): \(path) is not an openclaw-node bundle for \(name) (it has no \(entry) entry point)"))
        }
        var info = openclaw_node_bundle_info()
        openclaw_node_bundle_entry_cast(symbol)(&info)
        let version = fixedString(&info.version), declared = fixedString(&info.name)
        guard info.abi == OPENCLAW_NODE_BUNDLE_ABI, version == OPENCLAW_NODE_VERSION else {
            return .failure(Failure(description: "\(name): refused bundle \(path): it was built for openclaw-node \(version.isEmpty ? "(unknown)" : version) (bundle ABI \(info.abi)), this is \(OPENCLAW_NODE_VERSION) (ABI \(OPENCLAW_NODE_BUNDLE_ABI)); install the bundles that came with this openclaw-node"))
        }
        guard declared == name else {
            return .failure(Failure(description: "\(name): refused bundle \(path): it provides \"\(declared)\", not \"\(name)\""))
        }
        guard let make = info.make, let raw = make(),
              let exports = Unmanaged<AnyObject>.fromOpaque(raw).takeRetainedValue() as? BundleExports else {
            return .failure(Failure(description: "\(name): bundle \(path) returned nothing usable from its entry point"))
        }
        return .success(exports)
    }

    private static func fixedString<T>(_ field: inout T) -> String {
        withUnsafeBytes(of: &field) { raw in
            String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
        }
    }
}
