import Config
import FoundationEssentials
import Kit
import Support

/// `capabilities.computer.*`.
struct ComputerSettings: Sendable {
    /// The X display to drive: capabilities.computer.display, else $DISPLAY.
    var display: String?
    /// The Wayland compositor to drive (wins over the X display): capabilities.computer.waylandDisplay,
    /// else $WAYLAND_DISPLAY.
    var waylandDisplay: String?

    init(_ section: NodeConfig.CapabilitySection, environment: [String: String]) {
        display = section.string("display") ?? environment["DISPLAY"].flatMap { $0.isEmpty ? nil : $0 }
        waylandDisplay = section.string("waylandDisplay").flatMap { $0.isEmpty ? nil : $0 }
            ?? environment["WAYLAND_DISPLAY"].flatMap { $0.isEmpty ? nil : $0 }
    }
}

public enum ComputerCommands {
    public static let capabilityName = "computer"

    static func specs(_ c: ComputerCapability) -> [CommandSpec] { [
        CommandSpec("computer.act", capability: capabilityName, params: ComputerActParams.self, requiresForeground: true,
                    summary: "pointer and keyboard input at screenshot coordinates (XTest, or a wlroots compositor's virtual pointer and keyboard)",
                    paramsDoc: [("action", "left_click|right_click|middle_click|double_click|triple_click|mouse_move|left_click_drag|" +
                                 "left_mouse_down|left_mouse_up|scroll|type|key|hold_key|__close_execution"),
                                ("executionId", "uuid"), ("displayFrameId", "from screen.snapshot"), ("x, y, fromX, fromY", "pixels of the screenshot"),
                                ("screenIndex", "int"), ("refWidth", "int, default 1280"), ("modifiers", "\"ctrl+shift\""),
                                ("scrollDirection", "up|down|left|right"), ("scrollAmount", "1..100"), ("text", "string"),
                                ("keys", "\"ctrl+shift+t\", \"Return\""), ("durationMs", "0..10000")],
                    handler: c.act),
        CommandSpec("device.apps", capability: capabilityName, params: DeviceAppsParams.self,
                    summary: "installed desktop applications (XDG desktop entries)",
                    paramsDoc: [("query", "string"), ("limit", "1..200, default 100"), ("includeSystem", "bool")],
                    handler: c.apps),
        CommandSpec("device.apps.launch", capability: capabilityName, params: DeviceAppsLaunchParams.self, requiresForeground: true,
                    dangerous: true, summary: "start an application of device.apps (one native program, the entry's own arguments)",
                    paramsDoc: [("appId", "string, from device.apps")],
                    handler: c.launch),
    ] }

    public static let configFields: [ConfigField] = [
        ConfigField("display", .string, default: "$DISPLAY", "the X display to drive"),
        ConfigField("waylandDisplay", .string, default: "$WAYLAND_DISPLAY", "the Wayland compositor to drive (wlroots: virtual pointer and keyboard); wins over display"),
    ]

    public static func capability(context: CapabilityContext) -> any Capability {
        ComputerCapability(settings: ComputerSettings(context.config.capability(capabilityName),
                                                      environment: ProcessInfo.processInfo.environment))
    }
}
