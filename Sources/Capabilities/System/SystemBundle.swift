import CBundleABI
import Config
import Kit

/// The entry point of libopenclaw-system.so: the core checks the stamp this writes (the core version
/// and bundle ABI this bundle was built against) before it calls `make`.
@_cdecl("openclaw_node_bundle_system")
public func openclawNodeBundle(_ out: UnsafeMutablePointer<openclaw_node_bundle_info>) {
    openclaw_node_bundle_describe(out, "system") {
        BundleExports(capability: { SystemCommands.capability(context: $0) },
                      cli: { _, args, context in await ApprovalsCLI.main(args, context) }).retainedPointer()
    }
}
