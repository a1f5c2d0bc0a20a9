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

/// Which way a camera looks, as the phone nodes' callers name it.
public enum CameraFacing: String, Decodable, Sendable, Equatable {
    case front, back
}

/// camera.snap's params, as its manifest row describes them (ranges and defaults are checked and
/// filled in there, before this is decoded).
public struct CameraSnapParams: CommandParams, Equatable {
    public var deviceId: String?
    public var facing: CameraFacing?
    public var maxWidth: Int
    /// 0..1, or 1..100 as the Windows node sends it.
    public var quality: Double
    public var format: String
    public var delayMs: Int

    public init(deviceId: String? = nil, facing: CameraFacing? = nil, maxWidth: Int = 1600, quality: Double = 0.9,
                format: String = "jpg", delayMs: Int = 0) {
        self.deviceId = deviceId; self.facing = facing; self.maxWidth = maxWidth; self.quality = quality
        self.format = format; self.delayMs = delayMs
    }

    /// The one rule the manifest cannot state: above 1 the quality is a percentage, so whole.
    public func validated() throws(NodeError) -> CameraSnapParams {
        if quality > 1, quality.rounded() != quality {
            throw NodeError.invalidRequest("quality must be 0..1 or a whole number 1..100 (got \(quality))")
        }
        return self
    }

    /// TurboJPEG's 1...100, from 0..1 (iOS) or 1..100 (Windows).
    public var jpegQuality: Int { JPEGQuality.percent(quality) }
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

/// camera.clip's params, as its manifest row describes them.
public struct CameraClipParams: CommandParams, Equatable {
    public var deviceId: String?
    public var facing: CameraFacing?
    public var durationMs: Int
    /// No constant default: the microphone is recorded when there is one, unless the caller says not to.
    public var includeAudio: Bool?
    public var format: String

    public init(deviceId: String? = nil, facing: CameraFacing? = nil, durationMs: Int = 3000, includeAudio: Bool? = nil,
                format: String = "mp4") {
        self.deviceId = deviceId; self.facing = facing; self.durationMs = durationMs; self.includeAudio = includeAudio
        self.format = format
    }

    /// The microphone is recorded unless the caller says not to (video only when there is none).
    public var wantsAudio: Bool { includeAudio ?? true }
    /// Whether the caller asked for audio in so many words (a missing microphone is then a warning).
    public var audioRequested: Bool { includeAudio == true }
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
