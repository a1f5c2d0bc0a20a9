import Glibc
import NodeCLI

// The process-tree helper of system.run runs before anything async starts, on the main thread
// alone, so that the signals it waits for are blocked in every thread it will ever have.
if let code = CLI.helperMain(Array(CommandLine.arguments.dropFirst())) { exit(code) }
// The executable links only the core; capabilities are bundles the core loads when enabled.
exit(await CLI.main(Array(CommandLine.arguments.dropFirst())))
