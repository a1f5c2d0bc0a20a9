import Config
import Glibc
import Kit
import Support

/// The page's JavaScript contexts as the browser announces them (Runtime.executionContextCreated),
/// so an A2UI action can be judged by the context that posted it — its frame and origin at that
/// moment — rather than by whatever the page shows by the time we look. Updated on the DevTools
/// reader thread, in event order, before the binding call that refers to a context arrives.
final class PageContexts: @unchecked Sendable {
    struct Context: Equatable {
        let origin: String
        let frameId: String
        let isDefault: Bool
    }

    private let lock = Lock()
    private var contexts: [Int: Context] = [:]
    /// Set when the page's renderer died (Inspector.targetCrashed).
    private var crashed = false

    func handle(_ method: String, _ params: JSONValue) {
        lock.withLock {
            switch method {
            case "Runtime.executionContextCreated":
                let c = params["context"] ?? .null
                guard let id = c["id"]?.intValue else { return }
                contexts[id] = Context(origin: c["origin"]?.stringValue ?? "",
                                       frameId: c["auxData"]?["frameId"]?.stringValue ?? "",
                                       isDefault: c["auxData"]?["isDefault"]?.boolValue ?? false)
            case "Runtime.executionContextDestroyed":
                if let id = params["executionContextId"]?.intValue { contexts.removeValue(forKey: id) }
            case "Runtime.executionContextsCleared":
                contexts.removeAll()
            case "Inspector.targetCrashed":
                crashed = true
            default: break
            }
        }
    }

    func context(_ id: Int?) -> Context? { lock.withLock { id.flatMap { contexts[$0] } } }
    var isCrashed: Bool { lock.withLock { crashed } }
}
