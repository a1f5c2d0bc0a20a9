@testable import Config
import Foundation
@testable import Support
@testable import TestSupport
import Testing

/// The programs a bundle runs are written once, in its manifest (`programs`), and the manifest
/// holds: every program a bundle's code looks up by a literal name is declared there, every
/// declared Debian program is named in the bundle's code (or the kit's it runs it through), its package is one the bundle's
/// manifest lists (or one of Debian's essential ones), and where the program is installed here,
/// dpkg says that package ships it.
struct ProgramDeclarationsTests {
    static var manifests: [(folder: String, manifest: BundleManifest)] {
        let root = TestPaths.repoRoot + "/Sources/Capabilities"
        let folders = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).sorted()
        return folders.compactMap { folder in
            let file = "\(root)/\(folder)/libopenclaw-\(folder.lowercased()).manifest.json5"
            guard let text = try? String(contentsOfFile: file, encoding: .utf8),
                  let m = try? BundleManifestReader.read(text, file: file, expectedName: folder.lowercased(), library: nil) else { return nil }
            return (folder, m)
        }
    }

    /// The literal names a bundle's code looks up: `findExecutable("x"`, `ToolProcess.find("x"`.
    static func lookedUp(_ text: String) -> Set<String> {
        var out = Set<String>()
        for marker in ["findExecutable(\"", "ToolProcess.find(\""] {
            for piece in text.components(separatedBy: marker).dropFirst() {
                guard let name = piece.split(separator: "\"", maxSplits: 1).first, !name.contains("\\(") else { continue }
                out.insert(String(name))
            }
        }
        return out
    }

    static func isEssential(_ package: String) -> Bool {
        let r = try? runProcess("/usr/bin/dpkg-query", ["-W", "-f", "${Essential}", package])
        return r?.stdout == "yes"
    }

    @Test func everyProgramABundleRunsIsDeclaredWithThePackageThatShipsIt() throws {
        let all = Self.manifests
        #expect(all.count >= 10, "\(all.map(\.folder))")
        #expect(all.contains { !$0.manifest.programs.isEmpty })
        var checkedWithDpkg = 0
        let kit = ModuleWallTests.swiftFiles(under: "Sources/Kit").compactMap { try? String(contentsOfFile: $0, encoding: .utf8) }.joined(separator: "\n")
        for (folder, m) in all {
            let code = ModuleWallTests.swiftFiles(under: "Sources/Capabilities/\(folder)")
                .compactMap { try? String(contentsOfFile: $0, encoding: .utf8) }.joined(separator: "\n")
            let declared = Set(m.programs.map(\.name))
            for name in Self.lookedUp(code) {
                #expect(declared.contains(name), "\(folder) runs \(name) but its manifest's programs do not declare it")
            }
            let listed = PackageNeeds.kinds.filter { $0 != "build" && $0 != "test" }
                .flatMap { m.packages.names($0) }.flatMap { $0.split(separator: "|").map { String($0).trimmed() } }
            for p in m.programs {
                guard let package = p.package else { continue }
                // By the bundle's own code, or by the kit's that it runs it through (bubblewrap).
                #expect(code.contains("\"\(p.name)\"") || kit.contains("\"\(p.name)\""), "\(folder) declares \(p.name), which no code names")
                #expect(listed.contains(package) || Self.isEssential(package),
                        "\(folder): \(p.name)'s package \(package) is neither among its packages (\(listed)) nor essential")
                // Installed here: Debian's own record of which package ships the file.
                let path = p.name.hasPrefix("/") ? p.name : Subprocess.findExecutable(p.name, path: "/usr/bin:/bin:/usr/sbin:/sbin")
                guard let path, FileManager.default.fileExists(atPath: path) else { continue }
                // dpkg records a merged-/usr system's /bin programs under /bin.
                let real = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
                let spellings = [real, real.replacingOccurrences(of: "/usr/bin/", with: "/bin/"), real.replacingOccurrences(of: "/usr/sbin/", with: "/sbin/")]
                let owner = try spellings.lazy.map { try runProcess("/usr/bin/dpkg", ["-S", $0]) }.first { $0.code == 0 }
                guard let owner else { Issue.record("\(folder): dpkg knows no package of \(real)"); continue }
                let owners = owner.stdout.split(separator: "\n").compactMap { $0.split(separator: ":").first }.flatMap { $0.split(separator: ",") }
                    .map { $0.trimmingCharacters(in: .whitespaces) }
                #expect(owners.contains(package), "\(folder): \(path) is shipped by \(owners), not \(package)")
                checkedWithDpkg += 1
            }
        }
        // scripts/setup installs the bundles' test packages, so several are here to check.
        #expect(checkedWithDpkg >= 4, "only \(checkedWithDpkg) declared programs are installed here")
    }
}
