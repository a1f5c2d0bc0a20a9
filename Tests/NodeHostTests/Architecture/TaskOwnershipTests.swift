import Foundation
@testable import Support
@testable import TestSupport
import Testing

/// Every unstructured task in the product has an owner (docs/ARCHITECTURE.md, "Tasks have
/// owners"): it is held by what started it — assigned, appended, returned, or started through an
/// OwnedTasks — or it is a hop, one `await` from a synchronous callback into an actor. A task
/// started and forgotten would run on after whatever started it stopped.
struct TaskOwnershipTests {
    /// The `Task {` / `Task.detached {` openings in `text` that are neither held nor a hop.
    static func unowned(_ text: String) -> [(line: Int, text: String)] {
        var out: [(Int, String)] = []
        let opening = try! NSRegularExpression(pattern: #"(?<![A-Za-z0-9_.])Task(\.detached)?(\s*\([^)]*\))?\s*\{"#)
        // Held: the task is the value of an assignment (not to `_`), an argument, an append or a return.
        let held = try! NSRegularExpression(pattern: #"((?<!\b_ )=|return|\(|append\(|\?\?)\s*$"#)
        // A hop: `{ [captures] in await call(…) }`, the whole body one awaited call.
        let hop = try! NSRegularExpression(pattern: #"^\s*(\[[^\]]*\]\s*in\s*)?(try\?\s*)?await\s+[^;{}]*(\{[^{}]*\})?[^;{}]*\}[\s)},]*$"#)
        for (i, line) in text.components(separatedBy: "\n").enumerated() {
            let code = line.components(separatedBy: "//").first ?? ""
            let ns = code as NSString
            for m in opening.matches(in: code, range: NSRange(location: 0, length: ns.length)) {
                let before = ns.substring(to: m.range.location)
                let after = ns.substring(from: m.range.location + m.range.length)
                let isHeld = held.firstMatch(in: before, range: NSRange(location: 0, length: (before as NSString).length)) != nil
                let isHop = hop.firstMatch(in: after, range: NSRange(location: 0, length: (after as NSString).length)) != nil
                if !isHeld && !isHop { out.append((i + 1, line.trimmingCharacters(in: .whitespaces))) }
            }
        }
        return out
    }

    @Test func theCheckTellsTheShapesApart() {
        #expect(Self.unowned("let t = Task { await a(); await b() }").isEmpty)
        #expect(Self.unowned("s.calls[key] = Task {").isEmpty)
        #expect(Self.unowned("    return Task {").isEmpty)
        #expect(Self.unowned("onTermination = { _ in Task { [weak self] in await self?.remove(id) } }").isEmpty)
        #expect(Self.unowned("tasks.start { await speak() }").isEmpty)
        #expect(Self.unowned("group.addTask { await x() }").isEmpty)
        #expect(Self.unowned("        Task {\n            await speak(text)\n        }").count == 1)
        #expect(Self.unowned("Task { await a(); await b() }").count == 1)
        #expect(Self.unowned("Task.detached { [weak self] in").count == 1)
        #expect(Self.unowned("// Task { forgotten }").isEmpty)
        #expect(Self.unowned("_ = Task { await a(); await b() }").count == 1, "assigned to nothing is not held")
    }

    /// An OwnedTasks holds tasks for an owner that stops them: the file that makes one cancels it.
    @Test func everyOwnedTasksIsCancelledWhereItIsMade() throws {
        var made = 0
        for f in ModuleWallTests.swiftFiles(under: "Sources") where !f.hasSuffix("/OwnedTasks.swift") {
            let text = try String(contentsOfFile: f, encoding: .utf8)
            guard text.contains("OwnedTasks()") else { continue }
            made += 1
            #expect(text.contains(".cancelAll("), "\(f) makes an OwnedTasks and never cancels it")
        }
        #expect(made >= 6, "found \(made)")
    }

    @Test func everyTaskInTheProductHasAnOwner() throws {
        let files = ModuleWallTests.swiftFiles(under: "Sources")
        #expect(files.count > 300, "found \(files.count) files")
        var bad: [String] = []
        var seen = 0
        for f in files {
            let text = try String(contentsOfFile: f, encoding: .utf8)
            seen += text.components(separatedBy: "Task {").count - 1
            bad += Self.unowned(text).map { "\(f.replacingOccurrences(of: TestPaths.repoRoot + "/", with: "")):\($0.line): \($0.text)" }
        }
        #expect(seen > 40, "the check sees \(seen) tasks")
        #expect(bad.isEmpty, "tasks nobody holds (hold them, e.g. in an OwnedTasks, or make them a one-call hop):\n\(bad.joined(separator: "\n"))")
    }
}
