@testable import Config
import Foundation
@testable import Support
@testable import TestSupport
import Testing

/// The walls between the core and the bundles, checked on the source: a bundle imports only what
/// every bundle may see, the core imports no bundle, and the core names no capability, command or
/// capability key (they are the manifests' to say; the built-in device manifest is the exception).
struct ModuleWallTests {
    static let coreModules = ["Store", "Registry", "Runtime", "HostPresence", "NodeCLI"]
    static let bundleModules = ["CameraCapability", "LocationCapability", "ScreenCapability", "CanvasCapability",
                                "SystemCapability", "ComputerCapability", "TalkCapability", "HelloBundle"]

    static func swiftFiles(under dir: String) -> [String] {
        let root = TestPaths.repoRoot + "/" + dir
        guard let e = FileManager.default.enumerator(atPath: root) else { return [] }
        return e.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") && !$0.contains(".build/") }.map { root + "/" + $0 }
    }

    static func imports(_ file: String) -> [(line: Int, module: String)] {
        let text = (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
        return text.split(separator: "\n", omittingEmptySubsequences: false).enumerated().compactMap { i, l in
            let t = l.trimmingCharacters(in: .whitespaces)
            for prefix in ["import ", "@testable import ", "@_exported import "] where t.hasPrefix(prefix) {
                return (i + 1, String(t.dropFirst(prefix.count).split(separator: " ").first ?? ""))
            }
            return nil
        }
    }

    @Test func bundlesImportNothingOfTheRuntime() {
        let files = Self.swiftFiles(under: "Sources/Capabilities") + Self.swiftFiles(under: "Examples")
        #expect(files.count > 50, "found \(files.count) files")
        var bad: [String] = []
        for f in files { for i in Self.imports(f) where Self.coreModules.contains(i.module) { bad.append("\(f):\(i.line): import \(i.module)") } }
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
