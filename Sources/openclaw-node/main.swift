import CameraCapability
import CanvasCapability
import Foundation
import LocationCapability
import NodeHost
import ScreenCapability

// The executable only decides which capability bundles are compiled in; NodeHost does the rest.
let capabilities: CLI.CapabilityFactory = { config in
    NodeRuntime.builtinCapabilities(config: config) + [
        CameraCommands.capability(config: config),
        LocationCommands.capability(config: config),
        ScreenCommands.capability(config: config),
        CanvasCommands.capability(config: config),
    ]
}

let code = await CLI.main(Array(CommandLine.arguments.dropFirst()), capabilities: capabilities)
exit(code)
