import NodeHost

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

    public func validated() throws(NodeError) -> ScreenSnapshotParams {
        try ParamCheck.oneOf(format, "format", ["jpeg", "jpg", "png"])
        try ParamCheck.range(maxWidth, "maxWidth", 16...16384)
        try ParamCheck.range(quality, "quality", 0...100)
        try ParamCheck.range(screenIndex, "screenIndex", 0...32)
        return self
    }
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
}

public enum ScreenCommands {
    public static let specs: [CommandSpec] = [
        CommandSpec(ScreenCommand.snapshot.rawValue, capability: "screen", params: ScreenSnapshotParams.self,
                    requiresForeground: true, permission: "screen.capture", summary: "screenshot as JPEG or PNG",
                    paramsDoc: [("format", "jpeg|png"), ("maxWidth", "int"), ("quality", "0..1"),
                                ("screenIndex", "int"), ("includePointer", "bool")]),
        CommandSpec(ScreenCommand.record.rawValue, capability: "screen", params: ScreenRecordParams.self,
                    requiresForeground: true, dangerous: true, permission: "screen.record",
                    summary: "record the screen to MP4",
                    paramsDoc: [("screenIndex", "int"), ("durationMs", "250..60000, default 10000"),
                                ("fps", "1..30, default 10"), ("includeAudio", "bool"), ("format", "mp4")]),
    ]

    public static func capability() -> any Capability {
        PendingCapability(name: "screen", commands: specs,
                          reason: "screen capture (X11/fbdev) is not implemented in this build yet")
    }
}
