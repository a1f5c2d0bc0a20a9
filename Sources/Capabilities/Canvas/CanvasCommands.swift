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

/// canvas.present's params; the placement's ranges are the manifest's.
public struct CanvasPresentParams: CommandParams, Equatable {
    public var url: String?
    public var placement: CanvasPlacement?
}

public struct CanvasNavigateParams: CommandParams, Equatable {
    public var url: String
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

/// canvas.snapshot's params. Defaults as screen.snapshot's, with the iOS and Android canvas's quality.
public struct CanvasSnapshotParams: CommandParams, Equatable {
    public enum Format: String, Decodable, Sendable, Equatable { case jpeg, jpg, png }
    public var format: Format
    /// 1600 px for JPEG and 900 for PNG unless the caller says (filled in by the decoder: the
    /// default depends on the format).
    public var maxWidth: Int
    public var quality: Double

    public init(format: Format = .jpeg, maxWidth: Int? = nil, quality: Double = 0.82) {
        self.format = format; self.maxWidth = maxWidth ?? (format == .png ? 900 : 1600); self.quality = quality
    }

    enum CodingKeys: String, CodingKey { case format, maxWidth, quality }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(format: try c.decode(Format.self, forKey: .format), maxWidth: try c.decodeIfPresent(Int.self, forKey: .maxWidth),
                  quality: try c.decode(Double.self, forKey: .quality))
    }

    /// The format's name in the result ("jpg" is JPEG).
    public var formatName: String { format == .png ? "png" : "jpeg" }
    public var jpegQuality: Int { JPEGQuality.percent(quality) }
}

/// canvas.snapshot's result: the page as an image, base64.
public struct CanvasSnapshotResult: Encodable, Sendable, Equatable {
    public let format: String
    public let base64: String
}

public struct CanvasA2UIPushParams: CommandParams, Equatable {
    public var messages: [JSONValue]?
    public var jsonl: String?
    /// One of two params: a rule the manifest cannot state.
    public func validated() throws(NodeError) -> CanvasA2UIPushParams {
        guard messages != nil || jsonl != nil else { throw NodeError.invalidRequest("messages or jsonl required") }
        return self
    }
}

/// The legacy alias takes JSON lines only.
public struct CanvasA2UIPushJSONLParams: CommandParams, Equatable {
    public var jsonl: String
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
        CommandHandler(CanvasCommand.a2uiPushJSONL.rawValue, params: CanvasA2UIPushJSONLParams.self) { p, context throws(NodeError) in
            try await canvas.a2uiPush(CanvasA2UIPushParams(messages: nil, jsonl: p.jsonl), jsonlOnly: true, context)
        },
        CommandHandler(CanvasCommand.a2uiReset.rawValue, params: NoParams.self) { _, context throws(NodeError) in try await canvas.a2uiReset(context) },
    ] }

    public static func capability(context: CapabilityContext) -> any Capability {
        CanvasCapability(context: context)
    }
}
