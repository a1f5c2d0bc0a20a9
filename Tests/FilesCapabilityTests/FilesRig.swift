import Foundation
@testable import Support
@testable import TestSupport

/// The real daemon with the files bundle on, connected to the test gateway, and a data directory
/// of real files for it to serve. Every path is under /tmp and removed by `cleanup`.
struct FilesRig {
    let gw: TestGateway
    let node: NodeUnderTest
    /// A directory the policies of the tests allow (or not), resolved (no links on the way).
    let data: String
    var state: String { node.dir + "/state" }

    /// `files`: the inside of `files: { … }` besides `enabled: true`; `$DATA` is the data directory.
    static func start(_ files: String, env: [String: String] = [:], before: (String, NodeUnderTest) throws -> Void = { _, _ in }) throws -> FilesRig {
        let data = (TestPaths.tempDir("files-data") as NSString).resolvingSymlinksInPath
        let gw = try TestGateway(stateFile: data + ".gw.json", args: ["--auto-approve"])
        let section = files.replacingOccurrences(of: "$DATA", with: data)
        let node = NodeUnderTest(gatewayURL: gw.url, extra: "capabilities: { files: { enabled: true, \(section) } },")
        node.extraEnv = env
        do {
            try before(data, node)
            try node.start()
        } catch { node.cleanup(); gw.stop(); throw error }
        guard gw.waitFor("hello") != nil else { let log = node.log; node.cleanup(); gw.stop(); throw TestFailure("no hello: \(log)") }
        return FilesRig(gw: gw, node: node, data: data)
    }

    func cleanup() {
        node.cleanup(); gw.stop()
        try? FileManager.default.removeItem(atPath: data)
        try? FileManager.default.removeItem(atPath: data + ".gw.json")
    }

    /// The invoke's result event ({ok, payload, error}).
    func invoke(_ command: String, _ params: [String: Any], wait: TimeInterval = 60) -> JSONValue? {
        let text = String(decoding: try! JSONSerialization.data(withJSONObject: params), as: UTF8.self)
        return gw.invoke(command, paramsJSON: text, wait: wait)
    }

    /// A file-transfer command's body (the invoke itself must succeed, as upstream's host answers).
    func body(_ command: String, _ params: [String: Any], wait: TimeInterval = 60) -> JSONValue? {
        guard let r = invoke(command, params, wait: wait), r["ok"] == true else { return nil }
        return r["payload"]
    }

    func write(_ relative: String, _ text: String) {
        let path = data + "/" + relative
        try? FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: path, contents: Data(text.utf8))
    }

    func read(_ path: String) -> String? { (try? Data(contentsOf: URL(fileURLWithPath: path))).map { String(decoding: $0, as: UTF8.self) } }

    /// Names in a directory (hidden ones too), sorted.
    func names(_ dir: String) -> [String] { ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).sorted() }

    static func sha256(_ bytes: [UInt8]) -> String { SHA256.hash(bytes).map { String(format: "%02x", $0) }.joined() }
    static func mode(_ path: String) -> Int { ((try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions]) as? Int) ?? -1 }
}
