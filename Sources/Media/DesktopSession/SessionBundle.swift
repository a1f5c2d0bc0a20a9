import CBundleABI
import Config
import Kit

/// libopenclaw-session.so is linked by the screen and computer bundles (GNOME, later KDE) and
/// loaded by the core only for `presence.mode: "gnome"`, so the core itself never maps libpipewire.
@_cdecl("openclaw_node_bundle_session")
public func openclawNodeBundle(_ out: UnsafeMutablePointer<openclaw_node_bundle_info>) {
    openclaw_node_bundle_describe(out, "session") {
        BundleExports(presenceSource: { GnomePresenceSource(config: $0) }).retainedPointer()
    }
}
