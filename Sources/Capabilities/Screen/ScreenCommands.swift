import Config
import Kit
import Media
import Support

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

public enum ScreenCommands {
    /// The command table, bound to `screen`.
    static func specs(_ screen: ScreenCapability) -> [CommandSpec] { [
        CommandSpec(ScreenCommand.snapshot.rawValue, capability: "screen", params: ScreenSnapshotParams.self,
                    requiresForeground: true, permission: "screen.capture", summary: "screenshot as JPEG or PNG",
                    paramsDoc: [("format", "jpeg|png, default jpeg"), ("maxWidth", "int, default 1600 (jpeg) / 900 (png)"),
                                ("quality", "0..1 (or 1..100), default 0.72"),
                                ("screenIndex", "int: XRandR monitor of the default X screen when it has several, else X screen"),
                                ("includePointer", "bool, default true")],
                    handler: screen.snapshot),
        CommandSpec(ScreenCommand.record.rawValue, capability: "screen", params: ScreenRecordParams.self,
                    requiresForeground: true, dangerous: true, permission: "screen.record",
                    summary: "record the screen to MP4",
                    paramsDoc: [("screenIndex", "int"), ("durationMs", "250..60000, default 10000"),
                                ("fps", "1..30, default 10"), ("includeAudio", "bool, default false: microphone as AAC (ALSA; hasAudio tells)"),
                                ("format", "mp4")],
                    handler: screen.record),
    ] }

    /// The screen capability for this config (backend, display and framebuffer from
    /// `capabilities.screen`).
    /// The keys of `capabilities.screen` besides `enabled` (checked when the bundle loads).
    public static let configFields: [ConfigField] = [
        ConfigField("backend", .enumeration(["auto", "x11", "wayland", "fbdev"]), default: "\"auto\"", "capture backend"),
        ConfigField("display", .string, default: "$DISPLAY", "X display to capture"),
        ConfigField("waylandDisplay", .string, default: "$WAYLAND_DISPLAY", "Wayland compositor socket to capture (a name in $XDG_RUNTIME_DIR or a path)"),
        ConfigField("fbdev", .string, default: "\"/dev/fb0\"", "framebuffer device"),
    ]

    public static func capability(config: NodeConfig) -> any Capability {
        ScreenCapability(config: config)
    }
}
