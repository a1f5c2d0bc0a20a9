@testable import CanvasCapability
@testable import Kit
@testable import Support
import Testing

/// canvas.present's placement comes from the gateway: 1e300 once reached Int(…) and ended the
/// daemon. Out-of-range coordinates are INVALID_REQUEST naming the field; a real placement passes.
struct CanvasPlacementAttackTests {
    func present(_ placement: JSONValue) throws(NodeError) -> CanvasPresentParams {
        try CanvasPresentParams.decode(.value(["placement": placement]), command: "canvas.present")
    }

    @Test func hugeOrNegativeSizesAreRefused() {
        let attacks: [(JSONValue, String)] = [
            (["x": 1e300], "placement.x"), (["y": -1e300], "placement.y"), (["width": 1e19], "placement.width"),
            (["height": 0], "placement.height"), (["width": -5], "placement.width"), (["x": 40000], "placement.x"),
        ]
        for (p, field) in attacks {
            do throws(NodeError) { _ = try present(p); Issue.record("\(p) accepted") } catch {
                #expect(error.code == .invalidRequest && error.message.contains(field), "\(p): \(error.message)")
            }
        }
    }

    @Test func aRealPlacementPasses() throws {
        let p = try present(["x": -1920, "y": 0, "width": 800.5, "height": 600])
        #expect(p.placement?.x == -1920 && p.placement?.width == 800.5)
    }
}
