import FoundationEssentials
import Glibc
import NodeCLI

// The executable links only the core; capabilities are bundles the core loads when enabled.
exit(await CLI.main(Array(CommandLine.arguments.dropFirst())))
