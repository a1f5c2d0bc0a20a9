import Foundation
@testable import TestSupport
import Testing

/// Every file imports what it uses and nothing else: an `import` of one of the node's own Swift
/// modules must be matched by at least one name that module declares public or package (a type, function,
/// property, case or extension member) in that file. A copied block of imports fails here.
///
/// Read from the source, not the compiler: a name counts as used when it appears outside comments
/// and strings' import lines, so a file that only uses a very common member name of a module
/// still passes (the check errs on the side of keeping an import, never of removing a needed one).
struct ImportUseTests {
    /// The node's Swift modules and their source folders (the core's as Sources/NodeHost/Package.swift has them).
    static let modules: [String: [String]] = {
        var m: [String: [String]] = ["Support": ["Sources/Kit/Support"], "Config": ["Sources/Kit/Config"], "Kit": ["Sources/Kit/Kit"],
                                     "Media": ["Sources/Media"], "Video": ["Sources/Video"]]
        for layer in ModuleWallTests.coreLayers { m[layer.module] = ["Sources/NodeHost/" + layer.path] }
        return m
    }()
    /// Names too general to say which module a use belongs to.
    static let tooCommon: Set<String> = ["init", "description", "id", "name", "value", "run", "main", "start", "stop",
                                         "encode", "decode", "from", "to", "count", "text", "path", "get", "set"]

    static func publicNames(of module: String) -> Set<String> {
        var names: Set<String> = []
        let decl = try! NSRegularExpression(pattern: #"\b(?:func|var|let|case|struct|class|enum|protocol|typealias|actor)\s+`?([A-Za-z_][A-Za-z0-9_]*)"#)
        let caseList = try! NSRegularExpression(pattern: #"[,\s]([A-Za-z_][A-Za-z0-9_]*)\s*(?=[(,=]|$)"#)
        for dir in modules[module] ?? [] {
            for file in ModuleWallTests.swiftFiles(under: dir) {
                for line in ((try? String(contentsOfFile: file, encoding: .utf8)) ?? "").split(separator: "\n") {
                    let l = String(line)
                    guard l.range(of: #"\b(public|open|package)\b"#, options: .regularExpression) != nil else { continue }
                    let ns = l as NSString
                    for m in decl.matches(in: l, range: NSRange(location: 0, length: ns.length)) {
                        names.insert(ns.substring(with: m.range(at: 1)))
                    }
                    // `public enum E { case a, b(Int) }` on one line, or `case a, b` after `public`.
                    if let r = l.range(of: "case ") {
                        let rest = String(l[r.upperBound...]) as NSString
                        for m in caseList.matches(in: " " + (rest as String), range: NSRange(location: 0, length: rest.length + 1)) {
                            names.insert((" " + (rest as String) as NSString).substring(with: m.range(at: 1)))
                        }
                    }
                }
            }
        }
        return names.subtracting(tooCommon)
    }

    /// The line up to a `//` comment (one outside a string literal: an even number of quotes before it).
    static func withoutComment(_ line: String) -> String {
        var quotes = 0, previous: Character = " "
        for i in line.indices {
            let c = line[i]
            if c == "\"" { quotes += 1 }
            if c == "/", previous == "/", quotes % 2 == 0 { return String(line[..<line.index(before: i)]) }
            previous = c
        }
        return line
    }

    @Test func everyImportOfOurModulesIsUsed() throws {
        let names = Dictionary(uniqueKeysWithValues: Self.modules.keys.map { ($0, Self.publicNames(of: $0)) })
        for (m, n) in names { #expect(n.count > 3, "found too few public names in \(m)") }
        let files = ["Sources", "Examples"].flatMap { ModuleWallTests.swiftFiles(under: $0) }
        #expect(files.count > 200, "found \(files.count) files")
        let identifier = try NSRegularExpression(pattern: "[A-Za-z_][A-Za-z0-9_]*")
        var unused: [String] = []
        for file in files {
            let text = try String(contentsOfFile: file, encoding: .utf8)
            let code = text.split(separator: "\n", omittingEmptySubsequences: false)
                .map { line -> String in
                    if !ModuleWallTests.imports(text: String(line)).isEmpty { return "" }
                    return Self.withoutComment(String(line))
                }.joined(separator: "\n") as NSString
            let used = Set(identifier.matches(in: code as String, range: NSRange(location: 0, length: code.length)).map { code.substring(with: $0.range) })
            for i in ModuleWallTests.imports(file) {
                guard let declared = names[i.module] else { continue }  // C shims, the standard library, Testing
                if declared.isDisjoint(with: used) {
                    unused.append("\(file.replacingOccurrences(of: TestPaths.repoRoot + "/", with: "")):\(i.line): import \(i.module) (uses none of its names)")
                }
            }
        }
        #expect(unused.isEmpty, "\(unused.count) unused imports:\n\(unused.joined(separator: "\n"))")
    }
}
