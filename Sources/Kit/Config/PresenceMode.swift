
/// `presence.mode` in config: how the node decides whether someone is at the device.
public enum PresenceMode: String, Sendable, CaseIterable {
    case auto, x11, wayland, gnome, always, never, manual
}
