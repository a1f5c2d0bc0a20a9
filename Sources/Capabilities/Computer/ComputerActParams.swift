import Kit
import Support

/// computer.act's result: the action was performed (a refusal is an error).
public struct ComputerActResult: Encodable, Sendable, Equatable {
    public var ok = true
}

/// computer.act params (docs/PROTOCOL.md §6.5): one object for every action, as the gateway's
/// computer tool sends them, described by the manifest row; which fields an action needs is
/// checked by the action.
public struct ComputerActParams: CommandParams {
    public var action: String
    public var executionId: String?
    public var reason: String
    public var screenIndex: Int
    public var refWidth: Int
    public var displayFrameId: String?
    public var x: Int?
    public var y: Int?
    public var fromX: Int?
    public var fromY: Int?
    public var modifiers: String?
    public var scrollDirection: String
    public var scrollAmount: Int
    public var text: String?
    public var keys: String?
    public var durationMs: Int?
    public var windowRef: JSONValue?
    public var elementRef: JSONValue?
    public var observationId: String?
    public var deliveryMode: String?

    /// Rules between params, which the manifest cannot state.
    public func validated() throws(NodeError) -> ComputerActParams {
        guard !action.isEmpty else { throw NodeError.invalidRequest("action required") }
        // A point is both coordinates or neither (scroll and mouse down/up take an optional one): a
        // lone x once reached a force unwrap of y and ended the daemon.
        if (x == nil) != (y == nil) { throw NodeError.invalidRequest("x and y go together: give both, or neither") }
        if (fromX == nil) != (fromY == nil) { throw NodeError.invalidRequest("fromX and fromY go together: give both, or neither") }
        if action == ComputerAction.closeExecution.rawValue {
            guard executionId != nil else { throw NodeError.invalidRequest("executionId required for __close_execution") }
        }
        return self
    }

    public var typedText: String { text ?? "" }
    public var keyCombo: String { keys ?? "" }
    /// How long a drag takes (at least 100 ms): the default depends on the action.
    public var dragDurationMs: Int { max(100, durationMs ?? 0) }
    /// How long hold_key holds: 1 s unless said.
    public var holdDurationMs: Int { durationMs ?? 1000 }
}

/// The v1 action set (the agent's `wait` never reaches the node; `screenshot` is screen.snapshot).
enum ComputerAction: String, CaseIterable {
    case leftClick = "left_click", rightClick = "right_click", middleClick = "middle_click"
    case doubleClick = "double_click", tripleClick = "triple_click", mouseMove = "mouse_move"
    case leftClickDrag = "left_click_drag", leftMouseDown = "left_mouse_down", leftMouseUp = "left_mouse_up"
    case scroll, type, key
    case holdKey = "hold_key"
    case closeExecution = "__close_execution"

    /// Actions that need a point (and so a displayFrameId).
    var needsPoint: Bool { [.leftClick, .rightClick, .middleClick, .doubleClick, .tripleClick, .mouseMove, .leftClickDrag].contains(self) }
}

/// device.apps params, as the manifest row describes them. With `appId` it is the exact lookup the
/// gateway makes before a launch (one row with `executable`, or none); otherwise a listing.
public struct DeviceAppsParams: CommandParams {
    public var appId: String?
    public var query: String
    public var limit: Int
    /// The gateway's app_list sends no includeSystem and means every installed application.
    public var includeSystem: Bool

    public init(appId: String? = nil, query: String = "", limit: Int = 100, includeSystem: Bool = true) {
        self.appId = appId; self.query = query; self.limit = limit; self.includeSystem = includeSystem
    }

    public func validated() throws(NodeError) -> DeviceAppsParams {
        if let appId, appId.isEmpty { throw NodeError.invalidRequest("appId must not be empty (an appId from device.apps)") }
        return self
    }

    /// The query as it is compared: lowercased and trimmed.
    public var normalizedQuery: String { query.trimmed().lowercased() }
}

/// device.apps' result, upstream's Linux shape: the matching applications (at most `limit`), how
/// many matched, and whether the inventory read every directory entry.
public struct DeviceAppsResult: Encodable, Sendable, Equatable {
    public struct App: Encodable, Sendable, Equatable {
        public let appId: String
        public let appRevision: String
        public let label: String
        public let path: String
        public let system: Bool
        /// The exact lookup only: the program's real path.
        public let executable: String?
    }
    public let count: Int
    public let totalMatched: Int
    public let truncated: Bool
    public let inventoryComplete: Bool
    public let apps: [App]
}

/// device.apps.launch params, upstream's closed shape: `{appId, appRevision, agentId?, execution?}`,
/// where `execution` carries the approved system.run plan (its `command` exactly one program).
public struct DeviceAppsLaunchParams: CommandParams {
    public struct Execution: Codable, Sendable, Equatable {
        public var command: [String]?
        public var rawCommand: String?
        public var systemRunPlan: JSONValue?
        public var cwd: String?
        public var agentId: String?
        public var sessionKey: String?
        public var timeoutMs: Int?
        public var approved: Bool?
        public var approvalDecision: String?
        public var approvalSource: String?
        public var runId: String?
        public var suppressNotifyOnExit: Bool?
        public var env: JSONValue?

        /// The app a system.run plan was prepared for (`systemRunPlan.installedApp`), if it names one.
        public var planBinding: (String, String)? {
            guard let app = systemRunPlan?["installedApp"], let id = app["appId"]?.stringValue,
                  let revision = app["appRevision"]?.stringValue else { return nil }
            return (id, revision)
        }
    }
    public var appId: String
    public var appRevision: String?
    public var agentId: String?
    public var execution: Execution?

    public init(appId: String, appRevision: String? = nil) { self.appId = appId; self.appRevision = appRevision }

    public func validated() throws(NodeError) -> DeviceAppsLaunchParams {
        guard !appId.isEmpty else { throw NodeError.invalidRequest("appId required (an appId from device.apps)") }
        if let agentId, !(1...256).contains(agentId.count) { throw NodeError.invalidRequest("agentId must be 1 to 256 characters") }
        if let execution {
            guard execution.env == nil else { throw NodeError.invalidRequest("execution.env is not accepted for an app launch") }
            if let command = execution.command, command.count != 1 {
                throw NodeError.invalidRequest("execution.command must be exactly one program (the app's executable)")
            }
        }
        return self
    }

    /// The id (never empty after `validated()`).
    public var id: String { appId }
}

/// device.apps.launch's result: the started process, as upstream's gateway parses it.
public struct DeviceAppsLaunchResult: Encodable, Sendable, Equatable {
    public var status = "process-started"
    public let appId: String
    public let appRevision: String
    public let pid: Int32
    public var success = true
}
