import CXTest
@testable import ComputerCapability
@testable import Kit
@testable import Support
import Testing

/// computer.act values from the gateway that once ended the daemon: a scroll or mouse button with
/// x but no y (a force unwrap), and a key named "0x80000000" (a keysym past Int32 on Wayland).
struct ComputerActNumberAttackTests {
    func act(_ params: JSONValue) throws(NodeError) -> ComputerActParams {
        try ComputerActParams.decode(.value(params), command: "computer.act")
    }

    @Test func aPointIsBothCoordinatesOrNeither() throws {
        for p: JSONValue in [["action": "scroll", "x": 10], ["action": "left_mouse_down", "y": 3],
                             ["action": "left_mouse_up", "x": 0], ["action": "left_click_drag", "x": 1, "y": 1, "fromX": 4]] {
            do throws(NodeError) { _ = try act(p); Issue.record("\(p) accepted") } catch {
                #expect(error.code == .invalidRequest && error.message.contains("go together"), "\(p): \(error.message)")
            }
        }
        // The legitimate forms: a point, or none where it is optional.
        _ = try act(["action": "scroll", "x": 10, "y": 20])
        _ = try act(["action": "scroll"])
        _ = try act(["action": "left_mouse_down"])
    }

    @Test func keysymsPastTheX11RangeAreUnknownKeys() {
        for name in ["0x80000000", "0x1ffffffff", "0xffffffffffffffff"] {
            do throws(NodeError) { _ = try KeyNames.parse(name); Issue.record("\(name) accepted") } catch {
                #expect(error.message.contains("unknown key"), "\(name): \(error.message)")
            }
        }
        #expect(WaylandInput.modifierBit(0x1_0000_FFE1) == nil, "no Int32 trap, and not Shift")
        #expect(WaylandInput.modifierBit(KeySym(XK_Shift_L)) == 1)
        #expect((try? KeyNames.parse("ctrl+0x61")) != nil, "a keysym in range still works")
    }
}
