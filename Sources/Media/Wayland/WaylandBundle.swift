import CBundleABI
import Config
import Kit

/// libopenclaw-wayland.so is linked by the screen and computer bundles and loaded by the core only
/// for `presence.mode: "wayland"`, so the core itself never maps libwayland-client.
@_cdecl("openclaw_node_bundle_wayland")
public func openclawNodeBundle(_ out: UnsafeMutablePointer<openclaw_node_bundle_info>) {
    openclaw_node_bundle_describe(out, "wayland") {
        BundleExports(presenceSource: { WaylandPresenceSource(config: $0) }).retainedPointer()
    }
}
