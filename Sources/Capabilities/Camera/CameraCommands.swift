import Config
import Kit
import Media
import Support

/// camera.* command names and params, named exactly as on the wire (docs/PROTOCOL.md §6.1).
public enum CameraCommand: String, CaseIterable, Sendable {
    case list = "camera.list"
    case snap = "camera.snap"
    case clip = "camera.clip"
}

public struct CameraSnapParams: CommandParams, Equatable {
    public var deviceId: String?
    public var facing: String?
    public var maxWidth: Int?
    /// 0..1, or 1..100 as the Windows node sends it.
    public var quality: Double?
    public var format: String?
    public var delayMs: Int?

    public init(deviceId: String? = nil, facing: String? = nil, maxWidth: Int? = nil, quality: Double? = nil,
                format: String? = nil, delayMs: Int? = nil) {
        self.deviceId = deviceId; self.facing = facing; self.maxWidth = maxWidth; self.quality = quality
        self.format = format; self.delayMs = delayMs
    }

    public func validated() throws(NodeError) -> CameraSnapParams {
        try ParamCheck.range(maxWidth, "maxWidth", 16...8192)
        try ParamCheck.range(quality, "quality", 0...100)
        if let q = quality, q > 1, q.rounded() != q {
            throw NodeError.invalidRequest("quality must be 0..1 or a whole number 1..100 (got \(q))")
        }
        try ParamCheck.oneOf(format, "format", ["jpg", "jpeg"])
        try ParamCheck.oneOf(facing, "facing", ["front", "back"])
        try ParamCheck.range(delayMs, "delayMs", 0...10_000)
        return self
    }

    // Defaults, resolved here and nowhere else: 1600 px wide, quality 0.9, no delay.
    public var effectiveMaxWidth: Int { maxWidth ?? 1600 }
    /// TurboJPEG 1...100 from 0..1 (iOS) or 1..100 (Windows).
    public var effectiveQuality: Int { JPEGQuality.percent(quality, default: 90) }
    public var effectiveDelayMs: Int { delayMs ?? 0 }
}

/// camera.list's result.
public struct CameraListResult: Encodable, Sendable, Equatable {
    public let devices: [CameraInfo]
}

/// camera.snap's result: one JPEG as base64.
public struct CameraSnapResult: Encodable, Sendable, Equatable {
    public var format = "jpg"
    public let base64: String
    public let width: Int
    public let height: Int
}

public struct CameraClipParams: CommandParams, Equatable {
    public var deviceId: String?
    public var facing: String?
    public var durationMs: Int?
    public var includeAudio: Bool?
    public var format: String?

    /// The microphone is recorded unless the caller says not to (video only when there is none).
    public var wantsAudio: Bool { includeAudio ?? true }
    /// Whether the caller asked for audio in so many words (a missing microphone is then a warning).
    public var audioRequested: Bool { includeAudio == true }
    /// 3 s unless asked otherwise.
    public var effectiveDurationMs: Int { durationMs ?? 3000 }

    public func validated() throws(NodeError) -> CameraClipParams {
        try ParamCheck.range(durationMs, "durationMs", 250...60_000)
        try ParamCheck.oneOf(format, "format", ["mp4"])
        try ParamCheck.oneOf(facing, "facing", ["front", "back"])
        return self
    }
}

/// camera.clip's result: the MP4 as base64.
public struct CameraClipResult: Encodable, Sendable, Equatable {
    public var format = "mp4"
    public let base64: String
    public let durationMs: Int
    public let hasAudio: Bool
}

public enum CameraCommands {
    /// The command table, bound to `camera`.
    static func handlers(_ camera: CameraCapability) -> [CommandHandler] { [
        CommandHandler(CameraCommand.list.rawValue, params: NoParams.self) { _, _ throws(NodeError) in try await camera.list() },
        CommandHandler(CameraCommand.snap.rawValue, params: CameraSnapParams.self, handler: camera.snap),
        CommandHandler(CameraCommand.clip.rawValue, params: CameraClipParams.self, handler: camera.clip),
    ] }

    public static func capability(context: CapabilityContext) -> any Capability {
        CameraCapability(context: context)
    }
}
