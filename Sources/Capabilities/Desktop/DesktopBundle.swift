import CBundleABI
import Config
import Kit

/// The entry point of libopenclaw-desktop.so: the core checks the stamp this writes (the core
/// version and bundle ABI this bundle was built against) before it calls `make`.
@_cdecl("openclaw_node_bundle_desktop")
public func openclawNodeBundle(_ out: UnsafeMutablePointer<openclaw_node_bundle_info>) {
    openclaw_node_bundle_describe(out, "desktop") {
        BundleExports(capability: { DesktopCapability(context: $0) }).retainedPointer()
    }
}
