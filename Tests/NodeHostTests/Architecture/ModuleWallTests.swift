@testable import Config
import Foundation
@testable import Support
@testable import TestSupport
import Testing

/// The walls between the core and the bundles, checked on the source: a bundle imports only what
/// every bundle may see, the core imports no bundle, and the core names no capability, command or
/// capability key (they are the manifests' to say; the built-in device manifest is the exception).
struct ModuleWallTests {
    /// The core's modules, read from Sources/NodeHost/Package.swift (every `.target(name:`).
    static let coreModules: [String] = coreLayers.map(\.module)

    /// Each core module, its folder, and every module it may import: its row's dependencies in
    /// Sources/NodeHost/Package.swift (`kit` is the kit product's modules), read from the file.
    static let coreLayers: [(module: String, path: String, allowed: Set<String>)] = {
        let text = (try? String(contentsOfFile: TestPaths.repoRoot + "/Sources/NodeHost/Package.swift", encoding: .utf8)) ?? ""
        return text.components(separatedBy: ".target(name: \"").dropFirst().compactMap { row in
            guard let name = row.split(separator: "\"").first.map(String.init),
                  let deps = row.components(separatedBy: "dependencies: [").dropFirst().first?.components(separatedBy: "]").first,
                  let path = row.components(separatedBy: "path: \"").dropFirst().first?.split(separator: "\"").first.map(String.init)
            else { return nil }
            var allowed: Set<String> = []
            for d in deps.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespacesAndNewlines) }) {
                if d == "kit" { allowed.formUnion(kitModules) } else { allowed.insert(d.trimmingCharacters(in: CharacterSet(charactersIn: "\""))) }
            }
            return (name, path, allowed)
        }
    }()
    /// The kit product's modules (Sources/Kit/Package.swift): the core may import all of them.
    static let kitModules: Set<String> = ["Support", "Config", "Kit", "ControlLink"]
    /// The kit's modules that are the runtime's, not the bundles': the control socket's client
    /// (in the kit so that the launcher can link it without the core).
    static let runtimeOnlyKitModules: Set<String> = ["ControlLink"]
    /// What any module may import besides its dependencies: the C library and the Swift runtime's own.
    static let systemModules: Set<String> = ["Glibc", "Synchronization", "_Concurrency"]

    /// Every bundle: one module per folder of Sources/Capabilities (as Package.swift makes them),
    /// and the example bundle.
    static let bundleModules: [String] = {
        let folders = (try? FileManager.default.contentsOfDirectory(atPath: TestPaths.repoRoot + "/Sources/Capabilities")) ?? []
        return folders.sorted().map { "\($0)Capability" } + ["HelloBundle"]
    }()

    static func swiftFiles(under dir: String) -> [String] {
        let root = TestPaths.repoRoot + "/" + dir
        guard let e = FileManager.default.enumerator(atPath: root) else { return [] }
        return e.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") && !$0.contains(".build/") }.map { root + "/" + $0 }
    }

    static func imports(_ file: String) -> [(line: Int, module: String)] {
        imports(text: (try? String(contentsOfFile: file, encoding: .utf8)) ?? "")
    }

    /// The module each import declaration names, in every form Swift has: attributes (`@testable`,
    /// `@_exported`, `@_implementationOnly`, `@preconcurrency`, `@_spi(X)`), access levels (`public
    /// import`, `internal`, `package`, `private`, `fileprivate`), a declaration kind (`import struct
    /// X.Y`, `func`, `class`, `enum`, `protocol`, `typealias`, `var`, `let`) and submodules
    /// (`import X.Y` is module X). Several on one line (`import A; import B`) each count.
    static func imports(text: String) -> [(line: Int, module: String)] {
        let attributes: Set<String> = ["@testable", "@_exported", "@_implementationOnly", "@preconcurrency", "@_weakLinked", "@_spiOnly"]
        let access: Set<String> = ["public", "internal", "package", "private", "fileprivate", "open"]
        let kinds: Set<String> = ["struct", "class", "enum", "protocol", "typealias", "func", "var", "let"]
        var out: [(line: Int, module: String)] = []
        for (i, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let code = line.components(separatedBy: "//").first ?? ""
            for statement in code.split(separator: ";") {
                var words = statement.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
                while let w = words.first, attributes.contains(w) || w.hasPrefix("@_spi(") || access.contains(w) { words.removeFirst() }
                guard words.first == "import", words.count >= 2 else { continue }
                var rest = words.dropFirst()
                if let k = rest.first, kinds.contains(k) { rest = rest.dropFirst() }
                guard let path = rest.first, let module = path.split(separator: ".").first else { continue }
                out.append((i + 1, String(module)))
            }
        }
        return out
    }

    /// The forms a forbidden import can take, planted in a bundle: each must be caught.
    @Test func everyImportFormIsSeen() {
        let forms = ["import NodeDaemon", "@testable import NodeDaemon", "@_exported import NodeDaemon", "@_implementationOnly import NodeDaemon",
                     "public import NodeDaemon", "internal import NodeDaemon", "package import NodeDaemon", "@preconcurrency import NodeDaemon",
                     "import struct NodeDaemon.NodeRuntime", "import class NodeDaemon.GatewayConnection", "import func NodeDaemon.run",
                     "@_spi(Private) import NodeDaemon", "  import NodeDaemon.Daemon  // indented, a submodule", "import Foundation; import NodeDaemon",
                     "@preconcurrency public import enum NodeDaemon.X"]
        for form in forms {
            #expect(Self.imports(text: "// a file\n" + form + "\n").map(\.module).last == "NodeDaemon", "\(form)")
        }
        #expect(Self.imports(text: "// import NodeDaemon\nlet importNodeDaemon = 1\n\"import NodeDaemon\"").isEmpty)
        // Each form planted in each bundle's folder is a breach the wall check reports (the same
        // check the next test runs over the real files), and so is another bundle's module.
        for folder in (try? FileManager.default.contentsOfDirectory(atPath: TestPaths.repoRoot + "/Sources/Capabilities")) ?? [] {
            let file = TestPaths.repoRoot + "/Sources/Capabilities/\(folder)/Planted.swift"
            for form in forms {
                #expect(Self.bundleBreaches([(file, form + "\n")]).count == 1, "\(folder): \(form)")
            }
            let other = Self.bundleModules.first { $0 != "\(folder)Capability" }!
            #expect(Self.bundleBreaches([(file, "import struct \(other).Thing\n")]).count == 1, "\(folder) importing \(other)")
            #expect(Self.bundleBreaches([(file, "import Kit\nimport Media\n")]).isEmpty, "\(folder): what every bundle may import")
        }
        for module in Self.coreModules + Self.runtimeOnlyKitModules {
            let file = TestPaths.repoRoot + "/Sources/Capabilities/Camera/Planted.swift"
            #expect(Self.bundleBreaches([(file, "import \(module)\n")]).count == 1, "a bundle importing \(module)")
        }
        #expect(Self.coreModules.contains("NodeDaemon") && Self.coreModules.contains("GatewaySession") && Self.coreModules.count >= 12,
                "\(Self.coreModules)")
        #expect(Self.bundleModules.count == 11, "\(Self.bundleModules)")
    }

    /// Imports a bundle's file may not make: the core's modules (and the kit's that are the
    /// runtime's), and another bundle's.
    static func bundleBreaches(_ files: [(path: String, text: String)]) -> [String] {
        var bad: [String] = []
        for (f, text) in files {
            let folder = f.components(separatedBy: "/Sources/Capabilities/").dropFirst().first?.split(separator: "/").first.map(String.init)
            let own = folder.map { "\($0)Capability" } ?? "HelloBundle"
            for i in imports(text: text) where coreModules.contains(i.module) || runtimeOnlyKitModules.contains(i.module) || (bundleModules.contains(i.module) && i.module != own) {
                bad.append("\(f):\(i.line): import \(i.module)")
            }
        }
        return bad
    }

    @Test func bundlesImportNothingOfTheRuntimeNorOfEachOther() throws {
        let files = Self.swiftFiles(under: "Sources/Capabilities") + Self.swiftFiles(under: "Examples")
        #expect(files.count > 50, "found \(files.count) files")
        let bad = Self.bundleBreaches(try files.map { ($0, try String(contentsOfFile: $0, encoding: .utf8)) })
        #expect(bad.isEmpty, "\(bad.joined(separator: "\n"))")
    }

    /// A bundle is handed its own section (BundleSection), never the node's whole config.
    @Test func bundlesNeverSeeTheNodesConfig() throws {
        var bad: [String] = []
        for f in Self.swiftFiles(under: "Sources/Capabilities") + Self.swiftFiles(under: "Examples") {
            let lines = try String(contentsOfFile: f, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
            for (i, l) in lines.enumerated() where !l.trimmingCharacters(in: .whitespaces).hasPrefix("//") && l.contains("NodeConfig") {
                bad.append("\(f):\(i + 1)")
            }
        }
        #expect(bad.isEmpty, "\(bad.joined(separator: "\n"))")
    }

    @Test func theCoreImportsNoBundle() {
        let files = Self.swiftFiles(under: "Sources/NodeHost") + Self.swiftFiles(under: "Sources/Kit") + Self.swiftFiles(under: "Sources/openclaw-node")
        var bad: [String] = []
        for f in files { for i in Self.imports(f) where Self.bundleModules.contains(i.module) { bad.append("\(f):\(i.line): import \(i.module)") } }
        #expect(bad.isEmpty, "\(bad.joined(separator: "\n"))")
    }

    /// Inside the core, each module imports only what its row in Sources/NodeHost/Package.swift
    /// names (SwiftPM would let a module import any other one built before it): the layers stay
    /// one-way — the transport knows no gateway, the gateway session no daemon, the control socket
    /// no daemon.
    static func layerBreaches(_ files: [(path: String, text: String)]) -> [String] {
        var bad: [String] = []
        for (f, text) in files {
            guard let layer = coreLayers.first(where: { f.contains("/Sources/NodeHost/\($0.path)/") }) else { continue }
            for i in imports(text: text) where !layer.allowed.contains(i.module) && !systemModules.contains(i.module) {
                bad.append("\(f):\(i.line): \(layer.module) imports \(i.module)")
            }
        }
        return bad
    }

    @Test func eachCoreModuleImportsOnlyItsDependencies() throws {
        #expect(Self.coreLayers.count == Self.coreModules.count && Self.coreLayers.count >= 12)
        let transport = try #require(Self.coreLayers.first { $0.module == "Transport" })
        #expect(transport.allowed.contains("Kit") && !transport.allowed.contains("GatewaySession"))
        let files = Self.swiftFiles(under: "Sources/NodeHost")
        #expect(files.count > 100, "found \(files.count) files")
        let bad = Self.layerBreaches(try files.map { ($0, try String(contentsOfFile: $0, encoding: .utf8)) })
        #expect(bad.isEmpty, "\(bad.joined(separator: "\n"))")
        // Planted: an upward import in each form is caught, a declared one is not.
        let root = TestPaths.repoRoot + "/Sources/NodeHost"
        #expect(Self.layerBreaches([(root + "/Transport/Planted.swift", "@testable import GatewaySession\n")]).count == 1)
        #expect(Self.layerBreaches([(root + "/GatewaySession/Planted.swift", "import struct NodeDaemon.Daemon\n")]).count == 1)
        #expect(Self.layerBreaches([(root + "/ControlSocket/Planted.swift", "public import NodeDaemon\n")]).count == 1)
        #expect(Self.layerBreaches([(root + "/GatewaySession/Planted.swift", "import Transport\nimport Glibc\n")]).isEmpty)
    }

    /// Tests are split by module: a bundle's tests (Tests/<Folder>CapabilityTests) import no other
    /// bundle, and the core's tests, Media's and the shared helpers import none, so each builds
    /// without the others (Package.swift gives each test target only its own bundle).
    @Test func eachModulesTestsImportNoOtherBundle() throws {
        var bad: [String] = []
        for dir in try FileManager.default.contentsOfDirectory(atPath: TestPaths.repoRoot + "/Tests") {
            let own = dir.hasSuffix("CapabilityTests") ? String(dir.dropLast("Tests".count)) : nil
            for f in Self.swiftFiles(under: "Tests/" + dir) {
                for i in Self.imports(f) where Self.bundleModules.contains(i.module) && i.module != own {
                    bad.append("\(f):\(i.line): import \(i.module)")
                }
            }
        }
        #expect(bad.isEmpty, "\(bad.joined(separator: "\n"))")
        let bundleFolders = try FileManager.default.contentsOfDirectory(atPath: TestPaths.repoRoot + "/Sources/Capabilities")
        for folder in bundleFolders {
            #expect(FileSystem.isDirectory(TestPaths.repoRoot + "/Tests/\(folder)CapabilityTests"), "no Tests/\(folder)CapabilityTests")
        }
    }

    /// No string literal of the core holds a bundle's name, a command of one, or a key of its section.
    @Test func theCoreNamesNoCapability() throws {
        var manifests: [BundleManifest] = []
        for dir in try FileManager.default.contentsOfDirectory(atPath: TestPaths.repoRoot + "/Sources/Capabilities") {
            let path = TestPaths.repoRoot + "/Sources/Capabilities/\(dir)"
            for f in try FileManager.default.contentsOfDirectory(atPath: path) where f.hasSuffix(".manifest.json5") {
                let name = String(f.dropFirst("libopenclaw-".count).dropLast(".manifest.json5".count))
                manifests.append(try BundleManifestReader.read(try String(contentsOfFile: path + "/" + f, encoding: .utf8),
                                                               file: f, expectedName: name, library: nil))
            }
        }
        #expect(manifests.count == 10)
        var words: [String] = []
        for m in manifests {
            words += ["\"\(m.name)\"", "capabilities.\(m.name)", "libopenclaw-\(m.name)"]
            words += m.commands.map(\.name)
        }
        // Words that are something else where they stand: an HTTP header, `service --system`.
        let otherMeaning: [(file: String, word: String)] = [("Transport/HTTPUpgrade.swift", "\"location\""),
                                                             ("CLI/ServiceCommand.swift", "\"system\""),
                                                             ("Kit/CodeRunners.swift", "\"screen\"")]  // GNU screen, the program
        var bad: [String] = []
        for f in Self.swiftFiles(under: "Sources/NodeHost") + Self.swiftFiles(under: "Sources/Kit") {
            let lines = try String(contentsOfFile: f, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
            for (i, raw) in lines.enumerated() {
                let line = raw.trimmingCharacters(in: .whitespaces)
                if line.hasPrefix("//") { continue }
                // Only what is inside string literals (comments after code are dropped).
                let code = line.components(separatedBy: " //").first ?? line
                guard code.contains("\"") else { continue }
                for w in words where code.contains(w) && !otherMeaning.contains(where: { f.hasSuffix($0.file) && $0.word == w }) {
                    bad.append("\(f):\(i + 1): \(w)")
                }
            }
        }
        #expect(bad.isEmpty, "\(bad.joined(separator: "\n"))")
    }

    /// The codes every capability shares are spelled once, as NodeError.Code constants
    /// (NodeError.swift); a bundle, Media or the runtime uses the constants, never the text.
    @Test func sharedErrorCodesAreSpelledOnce() throws {
        let shared = ["INVALID_REQUEST", "UNAVAILABLE", "TIMEOUT", "CANCELLED", "NODE_BUSY", "NODE_BACKGROUND_UNAVAILABLE",
                      "PAYLOAD_TOO_LARGE", "MIC_BUSY", "CONNECTION_LOST", "_DISABLED", "_UNAVAILABLE"]
        var bad: [String] = []
        for f in Self.swiftFiles(under: "Sources") + Self.swiftFiles(under: "Examples") where !f.hasSuffix("Kit/Kit/NodeError.swift") {
            let lines = try String(contentsOfFile: f, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
            for (i, raw) in lines.enumerated() {
                let code = raw.trimmingCharacters(in: .whitespaces).components(separatedBy: "//").first ?? ""
                for c in shared where code.contains("\"\(c)\"") || (c.hasPrefix("_") && code.range(of: "\"[A-Z0-9]+\(c)\"", options: .regularExpression) != nil) {
                    bad.append("\(f):\(i + 1): \(c)")
                }
            }
        }
        #expect(bad.isEmpty, "\(bad.joined(separator: "\n"))")
    }
}
