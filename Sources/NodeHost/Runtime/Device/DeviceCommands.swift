import Config
import HostPresence
import Kit
import Registry
import Store
import Support

/// The commands of the built-in `device` capability, named exactly as on the wire.
public enum DeviceCommand: String, CaseIterable, Sendable {
    case info = "device.info"
    case status = "device.status"

    /// The capability (config section and connect `caps` entry) these commands belong to.
    public static let capabilityName = "device"

    /// Both commands take `{}`; any params object is accepted and ignored, as on iOS/Android.
    public typealias Params = NoParams

    /// The command table, bound to `device`. Reading device facts needs nobody at the device, is
    /// not in the gateway's dangerous set and needs no permission key, so every gate stays open.
    public static func specs(_ device: DeviceCapability) -> [CommandSpec] {
        [CommandSpec(info.rawValue, capability: capabilityName, params: Params.self,
                     summary: "Host name, hardware model, OS name and version, node version, locale") { _, _ in device.infoPayload() },
         CommandSpec(status.rawValue, capability: capabilityName, params: Params.self,
                     summary: "Battery, thermal state, storage, network path and uptime") { _, _ in device.statusPayload() }]
    }
}
