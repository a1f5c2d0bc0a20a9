import Config
import Kit
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
}

public struct CameraClipParams: CommandParams, Equatable {
    public var deviceId: String?
    public var facing: String?
    public var durationMs: Int?
    public var includeAudio: Bool?
    public var format: String?

    /// The microphone is recorded unless the caller says not to (video only when there is none).
    public var wantsAudio: Bool { includeAudio ?? true }

    public func validated() throws(NodeError) -> CameraClipParams {
        try ParamCheck.range(durationMs, "durationMs", 250...60_000)
        try ParamCheck.oneOf(format, "format", ["mp4"])
        try ParamCheck.oneOf(facing, "facing", ["front", "back"])
        return self
    }
}

public enum CameraCommands {
    /// The command table, bound to `camera`.
    static func specs(_ camera: CameraCapability) -> [CommandSpec] { [
        CommandSpec(CameraCommand.list.rawValue, capability: "camera", params: NoParams.self,
                    requiresForeground: true, summary: "list capture devices") { _, _ throws(NodeError) in try await camera.list() },
        CommandSpec(CameraCommand.snap.rawValue, capability: "camera", params: CameraSnapParams.self,
                    requiresForeground: true, dangerous: true, permission: "camera.capture",
                    summary: "take a JPEG photo",
                    paramsDoc: [("deviceId", "string"), ("facing", "front|back"), ("maxWidth", "int, default 1600"),
                                ("quality", "0..1 (or 1..100), default 0.9"), ("format", "jpg"), ("delayMs", "0..10000")],
                    handler: camera.snap),
        CommandSpec(CameraCommand.clip.rawValue, capability: "camera", params: CameraClipParams.self,
                    requiresForeground: true, dangerous: true, permission: "camera.capture",
                    summary: "record a short MP4 clip",
                    paramsDoc: [("deviceId", "string"), ("facing", "front|back"), ("durationMs", "250..60000, default 3000"),
                                ("includeAudio", "bool, default true: microphone as AAC when one exists (ALSA; hasAudio tells)"), ("format", "mp4")],
                    handler: camera.clip),
    ] }

    /// The V4L2 camera capability (unavailable, and so not advertised, when no capture device exists).
    /// The keys of `capabilities.camera` besides `enabled` (checked when the bundle loads).
    public static let configFields: [ConfigField] = [
        ConfigField("device", .string, "default camera, e.g. \"/dev/video0\"; unset = the first capture device"),
    ]

    public static func capability(config: NodeConfig) -> any Capability {
        CameraCapability(config: config)
    }
}
