@testable import Config
import Foundation
@testable import HostPresence
@testable import Kit
@testable import NodeCLI
@testable import Registry
@testable import Store
@testable import Support
@testable import TestSupport
import Testing

/// Capability bundles through the real executable, copied into an installed layout
/// (bin/openclaw-node + lib/openclaw-node/*.so) so each test can break one bundle on its own.
@Suite(.serialized) struct BundleLoadingTests {
    /// A private copy of the built executable and its libraries.
    struct InstallTree {
        let root: String
        var bin: String { root + "/bin" }
        var lib: String { root + "/lib/openclaw-node" }
        var binary: String { bin + "/openclaw-node" }
        var config: String { root + "/config.json5" }

        init(omitting omitted: [String] = [], config body: String = "") throws {
            root = TestPaths.tempDir("bundles")
            let fm = FileManager.default
            try fm.createDirectory(atPath: bin, withIntermediateDirectories: true)
            try fm.createDirectory(atPath: lib, withIntermediateDirectories: true)
            let built = (TestPaths.nodeBinary as NSString).deletingLastPathComponent
            try fm.copyItem(atPath: TestPaths.nodeBinary, toPath: binary)
            // The libraries and the bundles' manifests beside them, as the package installs them.
            for f in try fm.contentsOfDirectory(atPath: built)
            where f.hasPrefix("libopenclaw-") && (f.hasSuffix(".so") || f.hasSuffix(".manifest.json5")) {
                if omitted.contains(f) { continue }
                try fm.copyItem(atPath: built + "/" + f, toPath: lib + "/" + f)
                chmod(lib + "/" + f, f.hasSuffix(".so") ? 0o755 : 0o644)
            }
            let text = "{ node: { stateDir: '\(root)/state' }, presence: { mode: 'always' }, gateway: { discovery: { lan: false } }, \(body) }"
            _ = fm.createFile(atPath: config, contents: Data(text.utf8))
        }

        var env: [String: String] { ["HOME": root, "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"] }
        func run(_ args: [String]) throws -> ProcessResult { try runProcess(binary, args + ["--config", config], env: env) }
        func cleanup() { try? FileManager.default.removeItem(atPath: root) }

        /// `caps --json`: the reason given for `capability`, or nil when it is advertised.
        func reason(_ capability: String) throws -> String? {
            let r = try run(["caps", "--json"])
            let doc = try #require(JSONValue.parse(r.stdout), "\(r.stdout)\(r.stderr)")
            if doc["caps"]?.arrayValue?.contains(.string(capability)) == true { return nil }
            return doc["notAdvertised"]?.arrayValue?.compactMap(\.stringValue).first { $0.hasPrefix(capability + ":") }
        }

        /// Builds a C stand-in for a bundle: stamped with this header, then `tweak` applied.
        func writeCBundle(_ name: String, tweak: String) throws {
            let src = root + "/\(name).c"
            let shim = TestPaths.repoRoot + "/Sources/Kit/Shims/CBundleABI"
            let c = """
                #include "shim.h"
                static void *make(void) { return 0; }
                void openclaw_node_bundle_\(name)(openclaw_node_bundle_info *out) {
                    openclaw_node_bundle_describe(out, "\(name)", make);
                    \(tweak)
                }
                """
            _ = FileManager.default.createFile(atPath: src, contents: Data(c.utf8))
            let r = try runProcess("/usr/bin/gcc", ["-shared", "-fPIC", "-I", shim, "-o", lib + "/libopenclaw-\(name).so", src])
            #expect(r.code == 0, "\(r.stderr)")
        }
    }

    @Test func installedLayoutLoadsBundlesFromLibDirectory() throws {
        let t = try InstallTree(config: "capabilities: { location: { enabled: true, gpsd: '127.0.0.1:1' } }")
        defer { t.cleanup() }
        let r = try t.run(["caps", "--json"])
        let doc = try #require(JSONValue.parse(r.stdout), "\(r.stderr)")
        // location is loaded (its commands are in the table) even though gpsd is not there.
        let table = doc["table"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? []
        #expect(table.contains("location.get"), "\(r.stdout)")
        #expect(table.contains("canvas.navigate"), "\(r.stdout)")
    }

    @Test func absentBundleMakesOnlyThatCapabilityUnavailable() throws {
        let t = try InstallTree(omitting: ["libopenclaw-canvas.so"]); defer { t.cleanup() }
        let why = try #require(try t.reason("canvas"))
        #expect(why.contains("libopenclaw-canvas.so is not installed"), "\(why)")
        #expect(why.contains(t.lib), "names where it looked (beside its manifest): \(why)")
        let r = try t.run(["invoke", "canvas.navigate", "--params", "{\"url\":\"\"}"])
        #expect(r.code == 1)
        let e = try #require(JSONValue.parse(r.stdout))
        #expect(e["code"] == "CANVAS_UNAVAILABLE", "\(r.stdout)")
        let ok = try t.run(["invoke", "device.info"])
        #expect(ok.code == 0, "\(ok.stdout)\(ok.stderr)")
    }

    @Test func corruptBundleIsRefusedWithDlopensReason() throws {
        let t = try InstallTree(); defer { t.cleanup() }
        _ = FileManager.default.createFile(atPath: t.lib + "/libopenclaw-canvas.so", contents: Data(repeating: 0x5a, count: 4096))
        chmod(t.lib + "/libopenclaw-canvas.so", 0o755)
        let why = try #require(try t.reason("canvas"))
        #expect(why.contains("cannot load bundle") && why.contains("libopenclaw-canvas.so"), "\(why)")
        let r = try t.run(["caps"])
        #expect(r.code == 0)
        #expect(r.stderr.contains("WARN") && r.stderr.contains("cannot load bundle"), "logged: \(r.stderr)")
    }

    @Test func bundleOfAnotherVersionIsRefusedBeforeItRuns() throws {
        let t = try InstallTree(); defer { t.cleanup() }
        try t.writeCBundle("canvas", tweak: "strcpy(out->version, \"0.0.1\");")
        let why = try #require(try t.reason("canvas"))
        #expect(why.contains("built for openclaw-node 0.0.1") && why.contains("this is \(NodeVersion.version)"), "\(why)")

        try t.writeCBundle("canvas", tweak: "out->abi = 999;")
        let abi = try #require(try t.reason("canvas"))
        #expect(abi.contains("bundle ABI 999"), "\(abi)")

        try t.writeCBundle("canvas", tweak: "")
        let empty = try #require(try t.reason("canvas"))
        #expect(empty.contains("returned nothing usable"), "\(empty)")

        try t.writeCBundle("canvas", tweak: "strcpy(out->name, \"camera\");")
        let other = try #require(try t.reason("canvas"))
        #expect(other.contains("provides \"camera\""), "\(other)")
    }

    @Test func aLibraryWithoutTheEntryPointIsRefused() throws {
        let t = try InstallTree(); defer { t.cleanup() }
        // A real shared object, but not a canvas bundle.
        try FileManager.default.removeItem(atPath: t.lib + "/libopenclaw-canvas.so")
        try FileManager.default.copyItem(atPath: t.lib + "/libopenclaw-location.so", toPath: t.lib + "/libopenclaw-canvas.so")
        let why = try #require(try t.reason("canvas"))
        #expect(why.contains("no openclaw_node_bundle_canvas entry point"), "\(why)")
    }

    @Test func writableBundleOrDirectoryIsRefused() throws {
        let t = try InstallTree(); defer { t.cleanup() }
        chmod(t.lib + "/libopenclaw-canvas.so", 0o777)
        let why = try #require(try t.reason("canvas"))
        #expect(why.contains("writable by others (mode 0777)") && why.contains("chmod go-w"), "\(why)")
        // Group-writable for the owner's private group (a Debian 13 login's umask 0002 makes a
        // build so): nobody else can write, so it loads.
        if geteuid() == 0 {  // root's group is root's alone; a group with other members (nobody's, _apt's) is refused
            chmod(t.lib + "/libopenclaw-canvas.so", 0o775)
            #expect(try t.reason("canvas") == nil || (try t.reason("canvas"))?.contains("writable") == false)
            chown(t.lib + "/libopenclaw-canvas.so", uid_t.max, 65534)
            let shared = try #require(try t.reason("canvas"))
            #expect(shared.contains("writable by its group (gid 65534), which has members other than its owner (mode 0775)"), "\(shared)")
            chown(t.lib + "/libopenclaw-canvas.so", uid_t.max, 0)
        }
        chmod(t.lib + "/libopenclaw-canvas.so", 0o755)

        chmod(t.lib, 0o777)
        let dir = try #require(try t.reason("canvas"))
        #expect(dir.contains("\(t.lib) is writable by others (mode 0777)"), "\(dir)")
        chmod(t.lib, 0o755)
    }

    @Test func bundleOwnedByAnotherUserIsRefused() throws {
        guard geteuid() == 0 else { return }  // only root can give a file away
        let t = try InstallTree(); defer { t.cleanup() }
        chown(t.lib + "/libopenclaw-canvas.so", 4242, 4242)
        let why = try #require(try t.reason("canvas"))
        #expect(why.contains("owned by uid 4242, not root or the user running the node"), "\(why)")
    }

    @Test func disabledCapabilityNeverOpensItsBundle() throws {
        let t = try InstallTree(config: "capabilities: { canvas: { enabled: false } }"); defer { t.cleanup() }
        _ = FileManager.default.createFile(atPath: t.lib + "/libopenclaw-canvas.so", contents: Data("garbage".utf8))
        let r = try t.run(["caps", "--json"])
        #expect(!r.stderr.contains("libopenclaw-canvas.so"), "the bundle was opened: \(r.stderr)")
        #expect(try t.reason("canvas")?.contains("disabled in config") == true)
        let inv = try t.run(["invoke", "canvas.eval", "--params", "{\"javaScript\":\"1\"}"])
        #expect(JSONValue.parse(inv.stdout)?["code"] == "CANVAS_DISABLED", "\(inv.stdout)")
    }

    @Test func daemonStaysUpWithABrokenBundle() throws {
        let t = try InstallTree(); defer { t.cleanup() }
        _ = FileManager.default.createFile(atPath: t.lib + "/libopenclaw-canvas.so", contents: Data(repeating: 0, count: 100))
        chmod(t.lib + "/libopenclaw-canvas.so", 0o755)
        // Stopped by its PID: explicitly below, or by its deinit if a #require ends the test early.
        let daemon = try BackgroundProcess(t.binary, ["run", "--config", t.config], env: t.env)
        #expect(waitForDaemon(stateDir: t.root + "/state", daemon), "\(daemon.log)")
        let info = try t.run(["invoke", "device.info"])
        #expect(info.code == 0, "\(info.stdout)\(info.stderr)\(daemon.log)")
        let canvas = try t.run(["invoke", "canvas.snapshot"])
        #expect(JSONValue.parse(canvas.stdout)?["code"] == "CANVAS_UNAVAILABLE", "\(canvas.stdout)")
        #expect(daemon.log.contains("not advertised: canvas:") && daemon.log.contains("cannot load bundle"), "\(daemon.log)")
        #expect(daemon.stop() == 0)
    }

    /// Each shared module is defined in exactly one library: a second copy (SwiftPM links a target
    /// of the same package statically into every product) would give a bundle its own `Capability`
    /// and `BundleExports` types, and casts across the boundary would fail.
    @Test func sharedModulesAreDefinedOnce() throws {
        let built = (TestPaths.nodeBinary as NSString).deletingLastPathComponent
        let libs = try FileManager.default.contentsOfDirectory(atPath: built).filter { $0.hasPrefix("libopenclaw-") && $0.hasSuffix(".so") }
        #expect(libs.count >= 9, "\(libs)")
        // module → the one library that may define its types
        // (every core module, as Sources/NodeHost/Package.swift lists them)
        var home = ["Support": "libopenclaw-node-kit.so", "Config": "libopenclaw-node-kit.so", "Kit": "libopenclaw-node-kit.so",
                    "ControlLink": "libopenclaw-node-kit.so", "Media": "libopenclaw-media.so"]
        #expect(ModuleWallTests.coreModules.count >= 12)
        for module in ModuleWallTests.coreModules { home[module] = "libopenclaw-node-core.so" }
        for lib in libs {
            let r = try runProcess("/usr/bin/nm", ["-D", "--defined-only", built + "/" + lib])
            #expect(r.code == 0, "\(r.stderr)")
            // Nominal type descriptors ("$s<len><Module>…Mn") say which module's types a library defines.
            let defined = r.stdout.split(separator: "\n").compactMap { $0.split(separator: " ").last }.filter { $0.hasSuffix("Mn") }
            for (module, owner) in home {
                let n = defined.filter { $0.hasPrefix("$s\(module.utf8.count)\(module)") }.count
                #expect((n > 0) == (lib == owner), "\(lib) defines \(n) \(module) types")
            }
        }
    }

    /// The promise: a node with only a camera does not pay for FFmpeg, X11 or ALSA.
    @Test func executableLinksOnlyTheCore() throws {
        let r = try runProcess("/usr/bin/ldd", [TestPaths.nodeBinary])
        #expect(r.code == 0, "\(r.stderr)")
        for lib in ["libavcodec", "libavformat", "libswscale", "libX11", "libasound", "libturbojpeg", "libopenclaw-media", "libopenclaw-x11"] {
            #expect(!r.stdout.contains(lib), "\(lib) is linked: \(r.stdout)")
        }
        #expect(r.stdout.contains("libopenclaw-node-core.so") && r.stdout.contains("libopenclaw-node-kit.so"))
    }

    /// Foundation (with ICU, about 6 MB resident) and FoundationEssentials (3.9 MB of the idle
    /// daemon) are for tests only: the executable and every library we build use the standard
    /// library, Glibc and Support (JSONParser, FileSystem, Base64…). Libraries that one feature needs are opened on
    /// first use, not linked: libasound (audio capture) and libswscale (scaling, which brings
    /// libavutil and the GPU libraries) by Media, libsystemd and libavahi-client by the core.
    @Test func nothingWeShipLinksFoundationOrTheLazyLibraries() throws {
        let built = PathName.directory(TestPaths.nodeBinary)
        let shipped = try FileManager.default.contentsOfDirectory(atPath: built)
            .filter { $0.hasPrefix("libopenclaw-") && $0.hasSuffix(".so") }.map { built + "/" + $0 } + [TestPaths.nodeBinary]
        #expect(shipped.count >= 8, "\(shipped)")
        for file in shipped {
            let r = try runProcess("/usr/bin/readelf", ["-d", file])
            #expect(r.code == 0, "\(r.stderr)")
            let needed = r.stdout.split(separator: "\n").filter { $0.contains("(NEEDED)") }.joined(separator: "\n")
            #expect(!needed.contains("libFoundation"), "\(file) links Foundation or FoundationEssentials")
            if file.hasSuffix("libopenclaw-media.so") {
                for lib in ["libasound", "libswscale", "libavutil"] { #expect(!needed.contains(lib), "media links \(lib)") }
            }
            // The core opens libsystemd (logind, the resume signal), the Avahi client (LAN
            // discovery) and OpenSSL (TLS) when it uses them: one-shot commands map none.
            if file.hasSuffix("libopenclaw-node-core.so") || file == TestPaths.nodeBinary {
                for lib in ["libsystemd", "libavahi", "libdbus", "libssl", "libcrypto"] { #expect(!needed.contains(lib), "\(file) links \(lib)") }
            }
        }
    }
}
