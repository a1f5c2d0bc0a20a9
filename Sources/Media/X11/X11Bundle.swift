import CBundleABI
import Config
import Kit

/// libopenclaw-x11.so is linked by the screen and canvas bundles and loaded by the core only for
/// `presence.mode: "x11"`, so the core itself never maps Xlib.
@_cdecl("openclaw_node_bundle_x11")
public func openclawNodeBundle(_ out: UnsafeMutablePointer<openclaw_node_bundle_info>) {
    openclaw_node_bundle_describe(out, "x11") {
        BundleExports(presenceSource: { X11PresenceSource(display: $0.display) }).retainedPointer()
    }
}
