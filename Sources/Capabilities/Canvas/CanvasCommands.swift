import Config
import Kit
import Support

public enum CanvasCommand: String, CaseIterable, Sendable {
    case present = "canvas.present"
    case hide = "canvas.hide"
    case navigate = "canvas.navigate"
    case eval = "canvas.eval"
    case snapshot = "canvas.snapshot"
    case a2uiPush = "canvas.a2ui.push"
    case a2uiPushJSONL = "canvas.a2ui.pushJSONL"
    case a2uiReset = "canvas.a2ui.reset"
}

public struct CanvasPlacement: Codable, Sendable, Equatable {
    public var x: Double?
    public var y: Double?
    public var width: Double?
    public var height: Double?
}

public struct CanvasPresentParams: CommandParams, Equatable {
    public var url: String?
    public var placement: CanvasPlacement?
}

public struct CanvasNavigateParams: CommandParams, Equatable {
    public var url: String?
    public func validated() throws(NodeError) -> CanvasNavigateParams {
        guard url != nil else { throw NodeError.invalidRequest("url required") }
        return self
    }
}

public struct CanvasEvalParams: CommandParams, Equatable {
    public var javaScript: String?
    /// The Windows node's name for the same thing.
    public var script: String?
    public var source: String? { javaScript ?? script }
    public func validated() throws(NodeError) -> CanvasEvalParams {
        guard let s = source, !s.isEmpty else { throw NodeError.invalidRequest("javaScript required") }
        return self
    }
}

public struct CanvasSnapshotParams: CommandParams, Equatable {
    public var format: String?
    public var maxWidth: Int?
    public var quality: Double?
    public func validated() throws(NodeError) -> CanvasSnapshotParams {
        try ParamCheck.oneOf(format, "format", ["jpeg", "jpg", "png"])
        try ParamCheck.range(maxWidth, "maxWidth", 16...16384)
        try ParamCheck.range(quality, "quality", 0...100)
        return self
    }
}

public struct CanvasA2UIPushParams: CommandParams, Equatable {
    public var messages: [JSONValue]?
    public var jsonl: String?
    public func validated() throws(NodeError) -> CanvasA2UIPushParams {
        guard messages != nil || jsonl != nil else { throw NodeError.invalidRequest("messages or jsonl required") }
        return self
    }
}

public enum CanvasCommands {
    /// Every canvas command needs someone at the device.
    static func row<P: CommandParams>(_ c: CanvasCommand, _ p: P.Type, _ summary: String, _ doc: [(String, String)] = [],
                                      _ handler: @escaping @Sendable (P, InvocationContext) async throws(NodeError) -> JSONValue) -> CommandSpec {
        CommandSpec(c.rawValue, capability: "canvas", params: p, requiresForeground: true, summary: summary, paramsDoc: doc,
                    handler: handler)
    }

    /// The command table, bound to `canvas`.
    static func specs(_ canvas: CanvasCapability) -> [CommandSpec] { [
        row(.present, CanvasPresentParams.self, "show the canvas", [("url", "string"), ("placement", "{x,y,width,height}")], canvas.present),
        row(.hide, NoParams.self, "hide the canvas") { _, context throws(NodeError) in try await canvas.hide(context) },
        row(.navigate, CanvasNavigateParams.self, "load a URL (\"\" = built-in scaffold)", [("url", "string")], canvas.navigate),
        row(.eval, CanvasEvalParams.self, "evaluate JavaScript in the page; the value as a string", [("javaScript", "string (or script)")],
            canvas.eval),
        row(.snapshot, CanvasSnapshotParams.self, "capture the canvas",
            [("format", "jpeg|png, default jpeg"), ("maxWidth", "int, default 1600 jpeg / 900 png"), ("quality", "0..1 or 1..100, default 0.82")],
            canvas.snapshot),
        row(.a2uiPush, CanvasA2UIPushParams.self, "push A2UI v0.8 messages", [("messages", "array"), ("jsonl", "string")]) { p, context throws(NodeError) in
            try await canvas.a2uiPush(p, jsonlOnly: false, context)
        },
        row(.a2uiPushJSONL, CanvasA2UIPushParams.self, "push A2UI JSONL (legacy alias)", [("jsonl", "string")]) { p, context throws(NodeError) in
            try await canvas.a2uiPush(p, jsonlOnly: true, context)
        },
        row(.a2uiReset, NoParams.self, "reset the A2UI surface") { _, context throws(NodeError) in try await canvas.a2uiReset(context) },
    ] }

    /// The keys of `capabilities.canvas` besides `enabled` (checked when the bundle loads).
    public static let configFields: [ConfigField] = [
        ConfigField("browser", .string, default: "first of chromium-headless-shell, chromium", "browser executable"),
        ConfigField("window", .bool, default: "false", "show a kiosk window instead of running headless"),
        ConfigField("display", .string, default: "$DISPLAY", "X display for the window"),
    ]

    public static func capability(config: NodeConfig) -> any Capability {
        CanvasCapability(config: config)
    }
}
