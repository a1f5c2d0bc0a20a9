import Config
import HostPresence
import Kit
import Support

/// The capabilities loaded into this node and the command table they form. Built at start-up and
/// again on each config reload: each capability's enabled flag comes from config and its
/// availability from the device.
public struct CommandRegistry: Sendable {
    public struct Entry: Sendable {
        public let capability: any Capability
        /// The capability's rows, read once at load (their handlers are bound to the capability).
        public let commands: [CommandSpec]
        public let enabled: Bool
        public let availability: Availability
        public var advertised: Bool { enabled && availability == .available }
    }

    /// What the connect frame declares (docs/PROTOCOL.md §2.2).
    public struct Manifest: Sendable, Equatable {
        public let caps: [String]
        public let commands: [String]
        public let permissions: [String: Bool]
    }

    public let entries: [Entry]
    private let specsByName: [String: CommandSpec]
    private let entryByCapability: [String: Entry]

    /// `enabled(name)` answers whether config enables the capability. A capability whose name or
    /// one of whose commands an earlier one already declared is refused here, before anything of it
    /// starts, with a log line naming both; the first keeps working.
    /// With `start` (the daemon), each available capability's `start()` runs too, and one that
    /// cannot start is not advertised.
    /// `carried`: entries of the registry this one replaces (config reload) whose capability is in
    /// `capabilities` unchanged; they keep their availability and are neither probed nor started again.
    public static func load(_ capabilities: [any Capability], enabled: (String) -> Bool, start: Bool = false,
                            carried: [String: Entry] = [:],
                            log: Logger = Logger(component: "registry")) async -> CommandRegistry {
        var entries: [Entry] = []
        var owner: [String: String] = [:]  // command → capability that declared it
        for cap in capabilities {
            let commands = cap.commands
            if entries.contains(where: { $0.capability.name == cap.name }) {
                log.error("refused capability \(cap.name) (\(cap.origin)): a capability named \(cap.name) is already loaded (\(entries.first { $0.capability.name == cap.name }!.capability.origin)); the first one stays")
                continue
            }
            if let clash = commands.first(where: { owner[$0.name] != nil }) {
                let why = "command \(clash.name) is already declared by capability \(owner[clash.name]!)"
                log.error("refused capability \(cap.name) (\(cap.origin)): \(why); \(owner[clash.name]!) keeps serving it")
                entries.append(Entry(capability: UnloadedCapability(manifest: cap.manifest, reason: "refused: \(why)"), commands: [],
                                     enabled: enabled(cap.name), availability: .unavailable("refused: \(why)")))
                continue
            }
            for spec in commands { owner[spec.name] = cap.name }
            // A loaded capability must serve exactly the rows its manifest declares.
            if !(cap is UnloadedCapability), let why = cap.handlerMismatch {
                log.error("refused capability \(cap.name) (\(cap.origin)): \(why)")
                let refused = UnloadedCapability(manifest: cap.manifest, reason: "refused: \(why)")
                entries.append(Entry(capability: refused, commands: refused.commands, enabled: enabled(cap.name),
                                     availability: .unavailable("refused: \(why)")))
                continue
            }
            if let kept = carried[cap.name] { entries.append(kept); continue }
            let on = enabled(cap.name)
            // Availability is only probed for enabled capabilities: a disabled camera is never opened.
            var avail: Availability = on ? await cap.availability() : .unavailable("disabled in config")
            if start, avail == .available, let lifecycle = cap.lifecycle { avail = await lifecycle.start() }
            entries.append(Entry(capability: cap, commands: commands, enabled: on, availability: avail))
        }
        return CommandRegistry(entries: entries)
    }

    /// Names and commands are unique here (`load` refused the rest); a row naming another
    /// capability than the one declaring it is a programming error and is left out of the table.
    private init(entries: [Entry]) {
        self.entries = entries
        var specs: [String: CommandSpec] = [:]
        var byCap: [String: Entry] = [:]
        for e in entries {
            byCap[e.capability.name] = e
            for spec in e.commands where spec.capability == e.capability.name && specs[spec.name] == nil {
                specs[spec.name] = spec
            }
        }
        self.specsByName = specs
        self.entryByCapability = byCap
    }

    /// This table with `name`'s availability replaced (a capability probed again: a desktop or a
    /// camera that appeared after the node started).
    public func with(availability: Availability, for name: String) -> CommandRegistry {
        CommandRegistry(entries: entries.map { e in
            e.capability.name == name ? Entry(capability: e.capability, commands: e.commands, enabled: e.enabled, availability: availability) : e
        })
    }

    /// Enabled, loaded capabilities that cannot serve now: what a probe may find serving later.
    public var probeable: [String] {
        entries.filter { $0.enabled && $0.availability != .available && !($0.capability is UnloadedCapability) }.map(\.capability.name)
    }

    public func spec(_ command: String) -> CommandSpec? { specsByName[command] }
    public func entry(forCapability name: String) -> Entry? { entryByCapability[name] }

    /// Every command row, in table order.
    public var allSpecs: [CommandSpec] { entries.flatMap(\.commands) }

    public var manifest: Manifest {
        var caps: [String] = []
        var commands: [String] = []
        var permissions: [String: Bool] = [:]
        for e in entries {
            for spec in e.commands where e.enabled {
                if let p = spec.permission { permissions[p] = (permissions[p] ?? false) || e.advertised }
            }
            guard e.advertised else { continue }
            caps.append(e.capability.name)
            caps.append(contentsOf: e.capability.advertisedExtraCaps)
            commands.append(contentsOf: e.commands.map(\.name))
        }
        return Manifest(caps: caps, commands: commands, permissions: permissions)
    }

    /// One line per capability that is not advertised, saying why (no silent filtering).
    public var notAdvertisedReasons: [String] {
        entries.compactMap { e in
            if !e.enabled { return "\(e.capability.name): disabled in config (capabilities.\(e.capability.name).enabled)" }
            if case .unavailable(let why) = e.availability { return "\(e.capability.name): \(why)" }
            return nil
        }
    }
}
