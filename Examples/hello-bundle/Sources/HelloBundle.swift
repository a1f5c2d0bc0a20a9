import CBundleABI
import Config
import Kit

/// The entry point the node looks for: `openclaw_node_bundle_<name>`. It stamps the info with the
/// core version and bundle ABI this bundle was built against; the node checks them before `make`.
@_cdecl("openclaw_node_bundle_hello")
public func openclawNodeBundle(_ out: UnsafeMutablePointer<openclaw_node_bundle_info>) {
    openclaw_node_bundle_describe(out, "hello") {
        BundleExports(capability: { HelloCapability(context: $0) }).retainedPointer()
    }
}
