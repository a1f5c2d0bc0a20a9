import Config
import Kit
import Media

public enum ScreenCommand: String, CaseIterable, Sendable {
    case snapshot = "screen.snapshot"
    case record = "screen.record"
}

/// A still image's format as callers name it.
public enum ScreenImageFormat: String, Decodable, Sendable, Equatable {
    case jpeg, jpg, png
}

/// screen.snapshot's params, as its manifest row describes them. Defaults as the macOS node's
/// ScreenSnapshotService: JPEG at quality 0.72, the cursor shown, the first screen.
public struct ScreenSnapshotParams: CommandParams, Equatable {
    public var format: ScreenImageFormat
    /// 1600 px for JPEG and 900 for PNG unless the caller says: the one default that depends on
    /// another param, so it is filled in by the decoder below rather than by the manifest.
    public var maxWidth: Int
    public var quality: Double
    public var screenIndex: Int
    public var includePointer: Bool
    /// The agent's computer-use execution (accepted; the snapshot is the same).
    public var executionId: String?

    public init(format: ScreenImageFormat = .jpeg, maxWidth: Int? = nil, quality: Double = 0.72, screenIndex: Int = 0,
                includePointer: Bool = true, executionId: String? = nil) {
        self.format = format; self.maxWidth = maxWidth ?? Self.defaultMaxWidth(format); self.quality = quality
        self.screenIndex = screenIndex; self.includePointer = includePointer; self.executionId = executionId
    }

    enum CodingKeys: String, CodingKey { case format, maxWidth, quality, screenIndex, includePointer, executionId }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(format: try c.decode(ScreenImageFormat.self, forKey: .format),
                  maxWidth: try c.decodeIfPresent(Int.self, forKey: .maxWidth),
                  quality: try c.decode(Double.self, forKey: .quality),
                  screenIndex: try c.decode(Int.self, forKey: .screenIndex),
                  includePointer: try c.decode(Bool.self, forKey: .includePointer),
                  executionId: try c.decodeIfPresent(String.self, forKey: .executionId))
    }

    static func defaultMaxWidth(_ format: ScreenImageFormat) -> Int { format == .png ? 900 : 1600 }

    public var isPNG: Bool { format == .png }
    /// JPEG quality 1...100: a fraction (clamped to ≥ 0.05 like iOS) or a percentage (Windows).
    public var jpegQuality: Int { JPEGQuality.percent(quality, minimumFraction: 0.05) }
}

/// screen.snapshot's result: one image as base64 and the frame its coordinates refer to.
public struct ScreenSnapshotResult: Encodable, Sendable, Equatable {
    public let format: String
    public let base64: String
    public let width: Int
    public let height: Int
    public let screenIndex: Int
    public let capturedAtMs: Int64
    public let displayFrameId: String
}

/// screen.record's params, as its manifest row describes them. Defaults as the iOS node's
/// ScreenRecordService: 10 s at 10 fps, no audio, the first screen.
public struct ScreenRecordParams: CommandParams, Equatable {
    public var screenIndex: Int
    public var durationMs: Int
    public var fps: Int
    public var includeAudio: Bool
    public var format: String

    public init(screenIndex: Int = 0, durationMs: Int = 10_000, fps: Int = 10, includeAudio: Bool = false, format: String = "mp4") {
        self.screenIndex = screenIndex; self.durationMs = durationMs; self.fps = fps; self.includeAudio = includeAudio
        self.format = format
    }
}

/// screen.record's result: the MP4 as base64.
public struct ScreenRecordResult: Encodable, Sendable, Equatable {
    public var format = "mp4"
    public let base64: String
    public let durationMs: Int
    public let fps: Int
    public let screenIndex: Int
    public let hasAudio: Bool
}

public enum ScreenCommands {
    /// The command table, bound to `screen`.
    static func handlers(_ screen: ScreenCapability) -> [CommandHandler] { [
        CommandHandler(ScreenCommand.snapshot.rawValue, params: ScreenSnapshotParams.self, handler: screen.snapshot),
        CommandHandler(ScreenCommand.record.rawValue, params: ScreenRecordParams.self, handler: screen.record),
    ] }

    public static func capability(context: CapabilityContext) -> any Capability {
        ScreenCapability(context: context)
    }
}
