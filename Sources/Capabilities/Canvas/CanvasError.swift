import Config
import Kit
import Support

/// The canvas's error codes (docs/PROTOCOL.md §6.2 and the A2UI codes of the mobile nodes).
enum CanvasError {
    static let evalFailedCode: NodeError.Code = "CANVAS_EVAL_FAILED"
    static let a2uiHostNotConfiguredCode: NodeError.Code = "A2UI_HOST_NOT_CONFIGURED"
    static let a2uiHostUnavailableCode: NodeError.Code = "A2UI_HOST_UNAVAILABLE"

    static func unavailable(_ why: String) -> NodeError { NodeError(.unavailable("canvas"), why) }
    static func evalFailed(_ why: String) -> NodeError { NodeError(evalFailedCode, why) }
    static let a2uiHostNotConfigured = NodeError(a2uiHostNotConfiguredCode,
        "gateway did not advertise canvas host (hello-ok has no canvasHostUrl or pluginSurfaceUrls.canvas)")
    static func a2uiHostUnavailable(_ why: String) -> NodeError { NodeError(a2uiHostUnavailableCode, why) }
}
