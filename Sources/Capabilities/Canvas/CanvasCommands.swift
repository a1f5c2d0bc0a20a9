import Config
import Kit
import Media
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

    /// Window coordinates are screen pixels: X11 keeps them in 16 bits, so anything past ±32768 is
    /// refused here (a placement of 1e300 once reached an Int conversion and ended the daemon).
    public func validated() throws(NodeError) -> CanvasPresentParams {
        try ParamCheck.range(placement?.x, "placement.x", -32768...32767)
        try ParamCheck.range(placement?.y, "placement.y", -32768...32767)
        try ParamCheck.range(placement?.width, "placement.width", 1...32767)
        try ParamCheck.range(placement?.height, "placement.height", 1...32767)
        return self
    }
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

/// canvas.eval's result: the script's value in its string form.
public struct CanvasEvalResult: Encodable, Sendable, Equatable {
    public let result: String
}

public struct CanvasSnapshotParams: CommandParams, Equatable {
    public var format: String?
    public var maxWidth: Int?
    public var quality: Double?

    public init(format: String? = nil, maxWidth: Int? = nil, quality: Double? = nil) {
        self.format = format; self.maxWidth = maxWidth; self.quality = quality
    }

    public func validated() throws(NodeError) -> CanvasSnapshotParams {
        try ParamCheck.oneOf(format, "format", ["jpeg", "jpg", "png"])
        try ParamCheck.range(maxWidth, "maxWidth", 16...16384)
        try ParamCheck.range(quality, "quality", 0...100)
        return self
    }

    // Defaults (as screen.snapshot's): JPEG, 1600 px wide for JPEG and 900 for PNG.
    public var effectiveFormat: String { format == "png" ? "png" : "jpeg" }
    public var effectiveMaxWidth: Int { maxWidth ?? (effectiveFormat == "png" ? 900 : 1600) }
    /// 0..1 (iOS) or 1..100; default 0.82 like the iOS and Android canvas.
    public var effectiveQuality: Int { JPEGQuality.percent(quality, default: 82) }
}

/// canvas.snapshot's result: the page as an image, base64.
public struct CanvasSnapshotResult: Encodable, Sendable, Equatable {
    public let format: String
    public let base64: String
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
    /// The command table, bound to `canvas` (rows and gates: libopenclaw-canvas.manifest.json5).
    static func handlers(_ canvas: CanvasCapability) -> [CommandHandler] { [
        CommandHandler(CanvasCommand.present.rawValue, params: CanvasPresentParams.self, handler: canvas.present),
        CommandHandler(CanvasCommand.hide.rawValue, params: NoParams.self) { _, context throws(NodeError) in try await canvas.hide(context) },
        CommandHandler(CanvasCommand.navigate.rawValue, params: CanvasNavigateParams.self, handler: canvas.navigate),
        CommandHandler(CanvasCommand.eval.rawValue, params: CanvasEvalParams.self, handler: canvas.eval),
        CommandHandler(CanvasCommand.snapshot.rawValue, params: CanvasSnapshotParams.self, handler: canvas.snapshot),
        CommandHandler(CanvasCommand.a2uiPush.rawValue, params: CanvasA2UIPushParams.self) { p, context throws(NodeError) in
            try await canvas.a2uiPush(p, jsonlOnly: false, context)
        },
        CommandHandler(CanvasCommand.a2uiPushJSONL.rawValue, params: CanvasA2UIPushParams.self) { p, context throws(NodeError) in
            try await canvas.a2uiPush(p, jsonlOnly: true, context)
        },
        CommandHandler(CanvasCommand.a2uiReset.rawValue, params: NoParams.self) { _, context throws(NodeError) in try await canvas.a2uiReset(context) },
    ] }

    public static func capability(context: CapabilityContext) -> any Capability {
        CanvasCapability(context: context)
    }
}
