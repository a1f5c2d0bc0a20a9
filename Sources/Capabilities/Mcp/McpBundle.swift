import CBundleABI
import Config
import Kit

/// The entry point of libopenclaw-mcp.so: the core checks the stamp this writes (the core version
/// and bundle ABI this bundle was built against) before it calls `make`.
@_cdecl("openclaw_node_bundle_mcp")
public func openclawNodeBundle(_ out: UnsafeMutablePointer<openclaw_node_bundle_info>) {
    openclaw_node_bundle_describe(out, "mcp") {
        BundleExports(capability: { McpCommands.capability(context: $0) },
                      cli: { _, args, context in await McpCLI.main(args, context) }).retainedPointer()
    }
}
