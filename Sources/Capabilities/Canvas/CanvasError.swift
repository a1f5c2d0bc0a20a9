import Config
import Kit
import Support

/// The canvas's error codes (docs/PROTOCOL.md §6.2 and the A2UI codes of the mobile nodes).
enum CanvasError {
    static func unavailable(_ why: String) -> NodeError { NodeError("CANVAS_UNAVAILABLE", why) }
    static func evalFailed(_ why: String) -> NodeError { NodeError("CANVAS_EVAL_FAILED", why) }
    static let a2uiHostNotConfigured = NodeError("A2UI_HOST_NOT_CONFIGURED",
        "gateway did not advertise canvas host (hello-ok has no canvasHostUrl or pluginSurfaceUrls.canvas)")
    static func a2uiHostUnavailable(_ why: String) -> NodeError { NodeError("A2UI_HOST_UNAVAILABLE", why) }
}
