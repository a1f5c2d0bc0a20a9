import Glibc
import NodeCLI

// The process-tree helper of system.run and `invoke` through a running daemon run before anything
// async starts, on the main thread alone (CLI.synchronousMain says why).
if let code = CLI.synchronousMain(Array(CommandLine.arguments.dropFirst())) { exit(code) }
// The executable links only the core; capabilities are bundles the core loads when enabled.
exit(await CLI.main(Array(CommandLine.arguments.dropFirst())))
