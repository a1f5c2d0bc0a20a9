import Config
import Support

/// The node's commands as MCP tools (`openclaw-node mcp serve`): one tool per advertised command,
/// named as the command, described by its manifest summary, with its manifest params as
/// `inputSchema` — the rows the node checks every call against, so a schema and the checks cannot
/// drift.
///
/// Which commands are offered (`capabilities.mcp.serve`): with no `include`, every command but
/// those in the gateway's dangerous set (camera, screen recording, the file transfer commands,
/// speech) and those a gateway runs only once an operator approved the node's command surface
/// (system.run and the rest of system.*, screen.snapshot, fs.listDir, terminal.upload,
/// desktop.stream, mcp.tools.call.v1) — device.*, location.get, the canvas, computer.act, talk.
/// `include` (names or globs such as `screen.*`, as `toolFilter`'s) offers exactly what it matches
/// instead: a glob any command outside the dangerous set, a full name any command at all.
/// `exclude` then takes commands away.
struct NodeToolList: Sendable {
    let include: [String]
    let exclude: [String]

    init(include: [String] = [], exclude: [String] = []) { self.include = include; self.exclude = exclude }

    /// Whether a command is offered as a tool.
    func offers(_ row: BundleManifest.Command) -> Bool {
        if exclude.contains(where: { Glob.matches($0, row.name) }) { return false }
        if include.contains(row.name) { return true }
        if row.dangerous { return false }
        if include.isEmpty { return Self.allowedWithoutApproval(row) }
        return include.contains { Glob.matches($0, row.name) }
    }

    /// Not one a gateway runs only after an operator approved the node's command surface.
    static func allowedWithoutApproval(_ row: BundleManifest.Command) -> Bool {
        row.gateway != .surfaceApproval
    }

    /// The `tools/list` entries for these rows.
    func tools(_ rows: [BundleManifest.Command]) -> [JSONValue] {
        rows.filter(offers).map(Self.tool)
    }

    static func tool(_ row: BundleManifest.Command) -> JSONValue {
        var description = row.summary
        if row.requiresForeground {
            description += " Needs a person at the device (refused with NODE_BACKGROUND_UNAVAILABLE when nobody is there)."
        }
        var schema = ParamsJSONSchema.object(row.params)
        if case .object(var o) = schema, row.params.isEmpty { o["additionalProperties"] = false; schema = .object(o) }
        return ["name": .string(row.name), "description": .string(description), "inputSchema": schema,
                "annotations": ["readOnlyHint": .bool(Self.readsOnly(row.name)), "destructiveHint": .bool(row.dangerous),
                                "openWorldHint": false]]
    }

    /// Commands that only look (a list, a status, a snapshot): a hint for clients that ask before
    /// a call with effects. Read from the command's verb, so a new bundle's `x.list` is one too.
    static func readsOnly(_ name: String) -> Bool {
        let verb = name.split(separator: ".").last.map(String.init) ?? name
        return ["list", "info", "status", "health", "get", "snapshot", "snap", "listDir", "stat", "permissions", "which"]
            .contains(verb) || verb.hasPrefix("list") || verb.hasPrefix("get")
    }
}
