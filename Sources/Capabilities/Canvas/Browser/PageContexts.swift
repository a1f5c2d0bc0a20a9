import Config
import Glibc
import Kit
import Support

/// The page's JavaScript contexts as the browser announces them (Runtime.executionContextCreated),
/// so an A2UI action can be judged by the context that posted it — its frame and origin at that
/// moment — rather than by whatever the page shows by the time we look. Updated on the DevTools
/// reader thread, in event order, before the binding call that refers to a context arrives.
final class PageContexts: Sendable {
    struct Context: Equatable, Sendable {
        let origin: String
        let frameId: String
        let isDefault: Bool
    }

    private struct State {
        var contexts: [Int: Context] = [:]
        /// Set when the page's renderer died (Inspector.targetCrashed).
        var crashed = false
    }
    private let state = Locked(State())

    func handle(_ method: String, _ params: JSONValue) {
        state.withLock { s in
            switch method {
            case "Runtime.executionContextCreated":
                let c = params["context"] ?? .null
                guard let id = c["id"]?.intValue else { return }
                s.contexts[id] = Context(origin: c["origin"]?.stringValue ?? "",
                                       frameId: c["auxData"]?["frameId"]?.stringValue ?? "",
                                       isDefault: c["auxData"]?["isDefault"]?.boolValue ?? false)
            case "Runtime.executionContextDestroyed":
                if let id = params["executionContextId"]?.intValue { s.contexts.removeValue(forKey: id) }
            case "Runtime.executionContextsCleared":
                s.contexts.removeAll()
            case "Inspector.targetCrashed":
                s.crashed = true
            default: break
            }
        }
    }

    func context(_ id: Int?) -> Context? { state.withLock { s in id.flatMap { s.contexts[$0] } } }
    var isCrashed: Bool { state.withLock { $0.crashed } }
}
