@testable import Config
@testable import Kit
@testable import McpCapability
@testable import Support
import Testing

/// The rules of `mcp serve` that need no process: which commands are offered, and how an answer
/// becomes a CallToolResult.
struct McpServeUnitTests {
    static let info = BundleManifest.Command(name: "device.info", summary: "s", gateway: .default)
    static let snapshot = BundleManifest.Command(name: "screen.snapshot", summary: "s", requiresForeground: true, gateway: .surfaceApproval)
    static let record = BundleManifest.Command(name: "screen.record", summary: "s", dangerous: true, gateway: .default)
    static let run = BundleManifest.Command(name: "system.run", summary: "s", gateway: .surfaceApproval)

    /// The `i`th content block of a result, nil when there are fewer.
    static func block(_ result: JSONValue, _ i: Int) -> JSONValue? {
        guard let blocks = result["content"]?.arrayValue, i < blocks.count else { return nil }
        return blocks[i]
    }

    static let location = BundleManifest.Command(name: "location.get", summary: "s")  // the gateway's allowlist

    @Test func withoutIncludeNeitherDangerousNorOperatorApprovedCommands() {
        let list = NodeToolList()
        #expect(list.offers(Self.info) && list.offers(Self.location))
        #expect(!list.offers(Self.snapshot) && !list.offers(Self.run), "an operator's approval is needed over a gateway")
        #expect(!list.offers(Self.record), "dangerous")
    }

    @Test func aGlobTurnsOnWhatIsNotDangerousAndAFullNameAnything() {
        let globbed = NodeToolList(include: ["screen.*", "system.*"])
        #expect(globbed.offers(Self.snapshot) && globbed.offers(Self.run))
        #expect(!globbed.offers(Self.record), "a glob never offers a dangerous command")
        #expect(!globbed.offers(Self.info), "include offers only what it matches")
        let named = NodeToolList(include: ["screen.record"])
        #expect(named.offers(Self.record) && !named.offers(Self.snapshot))
        let excluded = NodeToolList(include: ["screen.*", "screen.record"], exclude: ["screen.record"])
        #expect(!excluded.offers(Self.record) && excluded.offers(Self.snapshot), "exclude wins")
    }

    @Test func aForegroundCommandSaysSoAndItsSchemaIsTheManifests() {
        let tool = NodeToolList.tool(Self.snapshot)
        #expect(tool["description"]?.stringValue?.contains("NODE_BACKGROUND_UNAVAILABLE") == true)
        #expect(tool["inputSchema"]?["additionalProperties"] == false, "no params: nothing else is accepted")
        #expect(tool["annotations"]?["readOnlyHint"] == true)
    }

    @Test func filesBecomeBlocksOfTheirKind() {
        let image = CallToolResultMaker.result(command: "camera.snap", .success(["format": "jpg", "base64": "AAEC", "width": 2]),
                                               protocolVersion: "2025-11-25")
        let blocks = image["content"]?.arrayValue ?? []
        #expect(blocks.count == 2 && blocks[1]["type"] == "image" && blocks[1]["mimeType"] == "image/jpeg" && blocks[1]["data"] == "AAEC", "\(image)")
        #expect(image["structuredContent"]?["base64"] == nil && image["structuredContent"]?["width"] == 2)
        let clip = CallToolResultMaker.result(command: "camera.clip", .success(["format": "mp4", "base64": "AAEC"]), protocolVersion: "2025-11-25")
        #expect(Self.block(clip, 1)?["resource"]?["mimeType"] == "video/mp4" && Self.block(clip, 1)?["resource"]?["blob"] == "AAEC", "\(clip)")
        // MCP 2024-11-05 has no audio blocks and no structuredContent.
        let old = CallToolResultMaker.result(command: "tts.speak", .success(["format": "wav", "base64": "AAEC"]), protocolVersion: "2024-11-05")
        #expect(Self.block(old, 1)?["type"] == "resource" && old["structuredContent"] == nil, "\(old)")
    }

    @Test func aNodeErrorIsAToolErrorWithItsCodeOnce() {
        let e = CallToolResultMaker.result(command: "x", .failure(NodeError(.invalidRequest, "maxWidth must be between 16 and 16384 (got 99999)")),
                                           protocolVersion: "2025-11-25")
        #expect(e["isError"] == true)
        #expect(Self.block(e, 0)?["text"] == "INVALID_REQUEST: maxWidth must be between 16 and 16384 (got 99999)", "\(e)")
        let verbatim = CallToolResultMaker.result(command: "system.run", .failure(NodeError(.unavailable, verbatim: "SYSTEM_RUN_DENIED: approval required")),
                                                  protocolVersion: "2025-11-25")
        #expect(Self.block(verbatim, 0)?["text"] == "UNAVAILABLE: SYSTEM_RUN_DENIED: approval required")
        #expect(Self.block(verbatim, 1)?["text"]?.stringValue?.contains("openclaw-node approvals approve PLAN") == true)
    }
}
