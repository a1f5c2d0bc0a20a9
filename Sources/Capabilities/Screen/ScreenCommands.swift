import Config
import Kit
import Media

public enum ScreenCommand: String, CaseIterable, Sendable {
    case snapshot = "screen.snapshot"
    case record = "screen.record"
}

public struct ScreenSnapshotParams: CommandParams, Equatable {
    public var format: String?
    public var maxWidth: Int?
    public var quality: Double?
    public var screenIndex: Int?
    public var includePointer: Bool?
    /// The agent's computer-use execution (accepted; the snapshot is the same).
    public var executionId: String?

    public func validated() throws(NodeError) -> ScreenSnapshotParams {
        try ParamCheck.oneOf(format, "format", ["jpeg", "jpg", "png"])
        try ParamCheck.range(maxWidth, "maxWidth", 16...16384)
        try ParamCheck.range(quality, "quality", 0...100)
        try ParamCheck.range(screenIndex, "screenIndex", 0...32)
        return self
    }

    // Defaults (as the macOS node's ScreenSnapshotService): JPEG, 1600 px wide for JPEG and 900 for
    // PNG, quality 0.72, cursor shown, first screen.
    public var effectiveFormat: String { format == "png" ? "png" : "jpeg" }
    public var effectiveMaxWidth: Int { maxWidth ?? (effectiveFormat == "png" ? 900 : 1600) }
    /// JPEG quality 1...100. `quality` may be a fraction (0...1, clamped to ≥ 0.05 like iOS) or a
    /// percentage (above 1, like Windows).
    public var effectiveQuality: Int { JPEGQuality.percent(quality, default: 72, minimumFraction: 0.05) }
    public var effectiveScreenIndex: Int { screenIndex ?? 0 }
    public var effectiveIncludePointer: Bool { includePointer ?? true }
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

public struct ScreenRecordParams: CommandParams, Equatable {
    public var screenIndex: Int?
    public var durationMs: Int?
    public var fps: Int?
    public var includeAudio: Bool?
    public var format: String?

    public func validated() throws(NodeError) -> ScreenRecordParams {
        try ParamCheck.range(screenIndex, "screenIndex", 0...32)
        try ParamCheck.range(durationMs, "durationMs", 250...60_000)
        try ParamCheck.range(fps, "fps", 1...30)
        try ParamCheck.oneOf(format, "format", ["mp4"])
        return self
    }

    // Defaults (as the iOS node's ScreenRecordService): 10 s at 10 fps, no audio, first screen.
    public var effectiveDurationMs: Int { durationMs ?? 10_000 }
    public var effectiveFps: Int { fps ?? 10 }
    public var effectiveScreenIndex: Int { screenIndex ?? 0 }
    public var wantsAudio: Bool { includeAudio ?? false }
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
