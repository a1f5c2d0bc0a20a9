import Config
import Kit
import Support

/// The commands of the built-in `device` capability, named exactly as on the wire.
public enum DeviceCommand: String, CaseIterable, Sendable {
    case info = "device.info"
    case status = "device.status"

    /// Both commands take `{}`; any params object is accepted and ignored, as on iOS/Android.
    public typealias Params = NoParams

    /// The handlers of the built-in manifest's rows (BuiltInManifest), bound to `device`.
    public static func handlers(_ device: DeviceCapability) -> [CommandHandler] {
        [CommandHandler(info.rawValue, params: Params.self) { _, _ in device.infoPayload() },
         CommandHandler(status.rawValue, params: Params.self) { _, _ in device.statusPayload() }]
    }
}

/// device.info's result.
public struct DeviceInfoResult: Encodable, Sendable, Equatable {
    public let deviceName: String
    public let modelIdentifier: String
    public let systemName: String
    public let systemVersion: String
    public let appVersion: String
    public let appBuild: String
    public let locale: String
}

/// device.status's result.
public struct DeviceStatusResult: Encodable, Sendable, Equatable {
    struct Thermal: Encodable, Sendable, Equatable { let state: String }
    let battery: BatteryStatus
    let thermal: Thermal
    let storage: StorageStatus
    let network: NetworkStatus
    let uptimeSeconds: Double
}
