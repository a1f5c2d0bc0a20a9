import Foundation
import Media
import NodeHost

/// canvas.* on a Chromium page driven over the DevTools pipe (headless, or a kiosk window on an
/// X display), with the built-in scaffold page and the A2UI renderer of the gateway's canvas host.
/// Headless, the browser starts on the first canvas command; in window mode it is up from the
/// daemon's start. On connect to a gateway with a canvas host, a running canvas that shows the
/// scaffold switches to the gateway's A2UI page. A browser that died is restarted on next use.
public struct CanvasCapability: Capability {
    public let name = "canvas"
    public var commands: [CommandSpec] { CanvasCommands.specs }
    let session: CanvasSession
    private let log = Logger(component: "canvas")

    public init(config: NodeConfig, environment: [String: String] = ProcessInfo.processInfo.environment) {
        session = CanvasSession(settings: CanvasSettings(config: config, environment: environment), log: log)
    }

    public func availability() async -> Availability {
        switch session.settings.browserOptions {
        case .success: return .available
        case .failure(let e): return .unavailable(e.message)
        }
    }

    public func invoke(_ command: String, params: any Sendable, context: InvocationContext) async throws(NodeError) -> JSONValue {
        let deadline = context.deadline
        switch CanvasCommand(rawValue: command) {
        case .present:
            let p = params as? CanvasPresentParams
            try await session.present(url: p?.url, placement: p?.placement, deadline: deadline)
            return .null
        case .hide:
            try await session.hide()
            return .null
        case .navigate:
            guard let p = params as? CanvasNavigateParams, let url = p.url else { throw NodeError.invalidRequest("url required") }
            try await session.navigate(url, deadline: deadline)
            return .null
        case .eval:
            guard let p = params as? CanvasEvalParams, let js = p.source else { throw NodeError.invalidRequest("javaScript required") }
            return ["result": .string(try await session.eval(js, deadline: deadline))]
        case .snapshot:
            let p = params as? CanvasSnapshotParams
            let format = p?.format == "png" ? "png" : "jpeg"
            let maxWidth = p?.maxWidth ?? (format == "png" ? 900 : 1600)
            let data = try await session.snapshot(format: format, maxWidth: maxWidth, quality: Self.quality(p?.quality),
                                                  maxPayloadBytes: context.maxPayloadBytes, deadline: deadline)
            return ["format": .string(format), "base64": .string(data.base64EncodedString())]
        case .a2uiPush, .a2uiPushJSONL:
            guard let p = params as? CanvasA2UIPushParams else { throw NodeError.invalidRequest("messages or jsonl required") }
            let messages = try A2UIMessages.from(messages: command == CanvasCommand.a2uiPush.rawValue ? p.messages : nil, jsonl: p.jsonl)
            return try await session.a2ui(A2UIMessages.pushScript(messages), deadline: deadline)
        case .a2uiReset:
            return try await session.a2ui(A2UIMessages.resetScript, deadline: deadline)
        case nil:
            throw NodeError.invalidRequest("unknown command \"\(command)\"")
        }
    }

    /// 0..1 (iOS) or 1..100; default 0.82 like the iOS and Android canvas.
    static func quality(_ q: Double?) -> Int { JPEGQuality.percent(q, default: 82) }

    public func gatewayConnected(_ link: GatewayLink) async { await session.connected(link) }

    /// A kiosk window is up from boot, showing the scaffold until an agent or gateway replaces it.
    public func daemonStarted() async { await session.superviseWindow() }

    public func shutdown() async { await session.shutdown() }
}
