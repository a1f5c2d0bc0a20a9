@testable import Kit
@testable import McpCapability
@testable import Support
import Testing

/// The MCP bundle's pure parts: published names, the result bounds, globs, ${VAR} headers, SSE.
@Suite struct McpUnitTests {
    @Test func toolNamesFollowTheGatewaysRules() {
        #expect(ToolCatalog.name(server: "localDocs", tool: "search") == "localDocs_search")
        #expect(ToolCatalog.name(server: "my docs!", tool: "read file") == "my_docs_read_file")
        #expect(ToolCatalog.name(server: "9lives", tool: "x") == "mcp_9lives_x")
        #expect(ToolCatalog.name(server: "--", tool: "") == "mcp_tool")
        let long = ToolCatalog.name(server: String(repeating: "s", count: 50), tool: String(repeating: "t", count: 50))
        #expect(long.count == 64 && long.hasPrefix(String(repeating: "s", count: 31) + "_"))
        var taken = Set<String>()
        #expect(ToolCatalog.unique("a_b", taken: &taken) == "a_b")
        #expect(ToolCatalog.unique("A_B", taken: &taken) == "A_B_2")
        #expect(ToolCatalog.unique("a_b", taken: &taken) == "a_b_3")
        let pattern = #/^[A-Za-z][A-Za-z0-9_-]{0,63}$/#
        for (s, t) in [("ünï", "tööl"), ("_", "_"), ("a", String(repeating: "x", count: 200)), ("1", "2")] {
            #expect(ToolCatalog.name(server: s, tool: t).wholeMatch(of: pattern) != nil, "\(s)/\(t)")
        }
    }

    @Test func catalogueIsSortedCappedAndDescribed() {
        let many = (0..<130).map { McpTool(name: "t\($0)", description: nil, inputSchema: nil) }
        let (d, leftOut) = ToolCatalog.build([("zeta", [McpTool(name: "a", description: "line\none\u{7}", inputSchema: ["type": "object"]) ]), ("alpha", many)])
        #expect(d.count == 128 && leftOut.count == 3)
        #expect(d.first?.mcp == .init(server: "alpha", tool: "t0"))
        #expect(d.allSatisfy { $0.pluginId == "node-mcp" && $0.command == "mcp.tools.call.v1" })
        #expect(d.first?.parameters == ToolCatalog.anyObject && d.first?.description == "t0")
        let (z, _) = ToolCatalog.build([("zeta", [McpTool(name: "a", description: "line\none\u{7}", inputSchema: ["type": "object"])])])
        #expect(z.first?.description == "line one" && z.first?.parameters == ["type": "object"])
    }

    @Test func resultsAreBoundedWithUpstreamsMarkers() {
        let big = String(repeating: "é", count: CallResultBounds.maxTextBytes)  // 2 bytes each: twice the budget
        let r = CallResultBounds.bound(["content": [["type": "text", "text": .string(big)], ["type": "text", "text": "after"], ["type": "image", "data": "AA==", "mimeType": "image/png"]]])
        let blocks = r["content"]?.arrayValue ?? []
        #expect(blocks.count == 2)
        let text = blocks[0]["text"]?.stringValue ?? ""
        #expect(text.hasSuffix(CallResultBounds.textMarker))
        // Upstream counts the marker toward the 1 MiB.
        #expect(text.utf8.count <= CallResultBounds.maxTextBytes && text.utf8.count > CallResultBounds.maxTextBytes - 50, "\(text.utf8.count)")
        // Exactly 1 MiB in all is left alone; a block that uses up the budget exactly is followed by
        // the marker as a block of its own.
        let exact = String(repeating: "a", count: CallResultBounds.maxTextBytes)
        #expect(CallResultBounds.bound(["content": [["type": "text", "text": .string(exact)]]])["content"]?.arrayValue?.first?["text"]?.stringValue == exact)
        let budget = CallResultBounds.maxTextBytes - CallResultBounds.textMarker.utf8.count
        let filled = CallResultBounds.bound(["content": [["type": "text", "text": .string(String(repeating: "b", count: budget))],
                                                         ["type": "text", "text": .string(String(repeating: "c", count: 100))]]])["content"]?.arrayValue ?? []
        #expect(filled.count == 2 && filled[1]["text"] == "[truncated: MCP text content exceeded 1 MB]", "\(filled.count)")
        #expect(blocks[1]["type"] == "image" && r["isError"] == nil)
        // Text that only repeats structuredContent goes; isError only when true.
        let s = CallResultBounds.bound(["content": [["type": "text", "text": "{\"a\":1}"]], "structuredContent": ["a": 1], "isError": false])
        #expect(s == ["content": [], "structuredContent": ["a": 1]])
        let e = CallResultBounds.bound(["content": [["type": "text", "text": "boom"]], "isError": true])
        #expect(e["isError"] == true)
        // Over 20 MiB in all (non-text blocks): one marker block instead.
        let huge = String(repeating: "A", count: CallResultBounds.maxResultBytes)
        let h = CallResultBounds.bound(["content": [["type": "image", "data": .string(huge), "mimeType": "image/png"]]])
        #expect(h == ["content": [["type": "text", "text": .string(CallResultBounds.resultMarker)]]])
        #expect(CallResultBounds.prefix("aé", bytes: 2) == "a")
    }

    @Test func globsEnvReferencesAndRedaction() {
        #expect(Glob.matches("read_*", "read_file") && !Glob.matches("read_*", "write_file"))
        #expect(Glob.matches("?et", "get") && Glob.matches("*", "") && !Glob.matches("a?", "a"))
        #expect(EnvReference.expand("Bearer ${TOKEN}", ["TOKEN": "abc"]) == .success("Bearer abc"))
        #expect(EnvReference.expand("$$5 and $x", [:]) == .success("$5 and $x"))
        guard case .failure(let m) = EnvReference.expand("${NOPE}", [:]) else { Issue.record("expanded a missing variable"); return }
        #expect(m.name == "NOPE")
        #expect(McpErrors.redact("GET https://x.example/?token=s3cret failed") == "GET <url> failed")
    }

    @Test func sseEventsSplitAcrossReads() {
        var p = SSEParser(maxEventBytes: 64)
        #expect(p.feed(Array("id: 7\r\ndata: {\"a\"".utf8)).isEmpty)
        let e = p.feed(Array(":1}\r\n\r\n: keep-alive\n\nevent: other\ndata: x\ndata: y\n\n".utf8))
        #expect(e == [.init(name: "message", data: "{\"a\":1}"), .init(name: "other", data: "x\ny")])
        #expect(p.lastEventId == "7")
        _ = p.feed(Array(("data: " + String(repeating: "z", count: 100) + "\n\n").utf8))
        #expect(p.dropped == 1)
    }

    @Test func callParamsAreRefusedWithUpstreamsMessages() {
        func refusal(_ v: JSONValue) -> String? {
            do { _ = try McpCallParams.decode(InvokeParams(v), command: "mcp.tools.call.v1"); return nil } catch { return error.message }
        }
        #expect(refusal([1]) == "INVALID_REQUEST: MCP tool params must be an object")
        #expect(refusal(["server": " ", "tool": "x"]) == "INVALID_REQUEST: MCP tool server and tool required")
        #expect(refusal(["server": "a", "tool": "x", "arguments": [1]]) == "INVALID_REQUEST: MCP tool arguments must be an object")
        #expect(refusal(["server": 3, "tool": "x"]) == "INVALID_REQUEST: MCP tool server and tool required")
        #expect(refusal(["tool": "x"]) == "INVALID_REQUEST: MCP tool server and tool required")
        #expect(refusal(["server": "a", "tool": "x"]) == nil)
        #expect(refusal(["server": "a", "tool": "x", "arguments": nil]) == nil)
    }
}
