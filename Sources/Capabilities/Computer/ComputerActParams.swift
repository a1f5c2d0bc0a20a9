import Kit
import Support

/// computer.act's result: the action was performed (a refusal is an error).
public struct ComputerActResult: Encodable, Sendable, Equatable {
    public var ok = true
}

/// computer.act params (docs/PROTOCOL.md §6.5): one object for every action, as the gateway's
/// computer tool sends them; which fields an action needs is checked by the action.
public struct ComputerActParams: CommandParams {
    public var action: String?
    public var executionId: String?
    public var reason: String?
    public var screenIndex: Int?
    public var refWidth: Int?
    public var displayFrameId: String?
    public var x: Int?
    public var y: Int?
    public var fromX: Int?
    public var fromY: Int?
    public var modifiers: String?
    public var scrollDirection: String?
    public var scrollAmount: Int?
    public var text: String?
    public var keys: String?
    public var durationMs: Int?
    public var windowRef: JSONValue?
    public var elementRef: JSONValue?
    public var observationId: String?
    public var deliveryMode: String?

    public func validated() throws(NodeError) -> ComputerActParams {
        guard let a = action, !a.isEmpty else { throw NodeError.invalidRequest("action required") }
        try ParamCheck.range(screenIndex, "screenIndex", 0...32)
        try ParamCheck.range(refWidth, "refWidth", 1...100_000)
        try ParamCheck.range(x, "x", 0...1_000_000)
        try ParamCheck.range(y, "y", 0...1_000_000)
        try ParamCheck.range(fromX, "fromX", 0...1_000_000)
        try ParamCheck.range(fromY, "fromY", 0...1_000_000)
        try ParamCheck.range(scrollAmount, "scrollAmount", 1...100)
        try ParamCheck.range(durationMs, "durationMs", 0...10_000)
        try ParamCheck.oneOf(scrollDirection, "scrollDirection", ["up", "down", "left", "right"])
        if a == ComputerAction.closeExecution.rawValue {
            guard executionId != nil else { throw NodeError.invalidRequest("executionId required for __close_execution") }
        }
        return self
    }

    // Resolved values, the defaults in one place (the action checks which fields it needs).
    /// The action's name (never empty after `validated()`).
    public var actionName: String { action ?? "" }
    public var closeReason: String { reason ?? "closed" }
    public var effectiveScreenIndex: Int { screenIndex ?? 0 }
    /// The width the agent's coordinates refer to (its screenshot's): 1280 unless said.
    public var effectiveRefWidth: Int { refWidth ?? Self.defaultRefWidth }
    public static let defaultRefWidth = 1280
    public var effectiveScrollDirection: String { scrollDirection ?? "down" }
    public var effectiveScrollAmount: Int { scrollAmount ?? 3 }
    public var typedText: String { text ?? "" }
    public var keyCombo: String { keys ?? "" }
    /// How long a drag takes (at least 100 ms).
    public var dragDurationMs: Int { max(100, durationMs ?? 0) }
    /// How long hold_key holds: 1 s unless said, at most 10 s.
    public var holdDurationMs: Int { min(durationMs ?? 1000, 10_000) }
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

/// device.apps params: `{query?, limit? (1–200, default 100), includeSystem?}`.
public struct DeviceAppsParams: CommandParams {
    public var query: String?
    public var limit: Int?
    public var includeSystem: Bool?

    public init(query: String? = nil, limit: Int? = nil, includeSystem: Bool? = nil) {
        self.query = query; self.limit = limit; self.includeSystem = includeSystem
    }

    public func validated() throws(NodeError) -> DeviceAppsParams {
        try ParamCheck.range(limit, "limit", 1...200)
        return self
    }

    /// Lowercased and trimmed; "" matches every application.
    public var effectiveQuery: String { query?.trimmed().lowercased() ?? "" }
    public var effectiveLimit: Int { limit ?? 100 }
    public var includesSystem: Bool { includeSystem == true }
}

/// device.apps' result: the matching applications (at most `limit`) and how many matched.
public struct DeviceAppsResult: Encodable, Sendable, Equatable {
    public struct App: Encodable, Sendable, Equatable {
        public let label: String
        public let bundleId: String
        public let path: String
        public let system: Bool
    }
    public let count: Int
    public let totalMatched: Int
    public let truncated: Bool
    public let apps: [App]
}

/// device.apps.launch params: the inventory's id; `appRevision` is accepted and ignored.
public struct DeviceAppsLaunchParams: CommandParams {
    public var appId: String?
    public var appRevision: String?

    public init(appId: String? = nil) { self.appId = appId }

    public func validated() throws(NodeError) -> DeviceAppsLaunchParams {
        guard let id = appId, !id.isEmpty else { throw NodeError.invalidRequest("appId required (an id from device.apps)") }
        return self
    }

    /// The id (never empty after `validated()`).
    public var id: String { appId ?? "" }
}

/// device.apps.launch's result: the started process.
public struct DeviceAppsLaunchResult: Encodable, Sendable, Equatable {
    public var status = "process-started"
    public let pid: Int32
}
