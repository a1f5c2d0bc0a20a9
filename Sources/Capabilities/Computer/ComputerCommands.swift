import Config
import Kit
import Support

/// `capabilities.computer.*`.
struct ComputerSettings: Sendable {
    /// The X display to drive: capabilities.computer.display, else $DISPLAY.
    var display: String?
    /// The Wayland compositor to drive (wins over the X display): capabilities.computer.waylandDisplay,
    /// else $WAYLAND_DISPLAY.
    var waylandDisplay: String?

    init(_ section: BundleSection, environment: [String: String]) {
        display = section.string("display") ?? environment["DISPLAY"].flatMap { $0.isEmpty ? nil : $0 }
        waylandDisplay = section.string("waylandDisplay").flatMap { $0.isEmpty ? nil : $0 }
            ?? environment["WAYLAND_DISPLAY"].flatMap { $0.isEmpty ? nil : $0 }
    }
}

public enum ComputerCommands {
    static func handlers(_ c: ComputerCapability) -> [CommandHandler] { [
        CommandHandler("computer.act", params: ComputerActParams.self, handler: c.act),
        CommandHandler("device.apps", params: DeviceAppsParams.self, handler: c.apps),
        CommandHandler("device.apps.launch", params: DeviceAppsLaunchParams.self, handler: c.launch),
    ] }

    public static func capability(context: CapabilityContext) -> any Capability {
        ComputerCapability(manifest: context.manifest, settings: ComputerSettings(context.section, environment: context.environment),
                           clock: context.clock)
    }
}
