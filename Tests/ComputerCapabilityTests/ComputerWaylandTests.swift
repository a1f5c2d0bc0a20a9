@testable import Config
import Foundation
@testable import Kit
@testable import Support
@testable import TestSupport
import Testing

/// computer.act on a wlroots compositor (sway, headless) through its virtual pointer and keyboard,
/// with the real binary and the test gateway; wev, a Wayland client that prints every input event
/// it receives, stands for the application under the agent's hands.
@Suite(.serialized, .enabled(if: Sway.available && FileManager.default.isExecutableFile(atPath: "/usr/bin/wev"), "needs root, sway and wev"))
struct ComputerWaylandTests {
    @Test func clicksTypingKeysAndScrollingReachAWaylandClient() throws {
        let sway = try Sway(outputs: [(640, 480, "#808080")])
        defer { sway.stop() }
        let log = TestPaths.tempDir("wev") + "/wev.log"
        // stdbuf: wev's stdout is a file here; line-buffer it so each event is there when printed.
        let wev = try BackgroundProcess("/bin/sh", ["-c", "exec /usr/bin/stdbuf -oL /usr/bin/wev > \(log) 2>&1"],
                                        env: ["XDG_RUNTIME_DIR": sway.runtimeDir, "WAYLAND_DISPLAY": sway.socket, "PATH": "/usr/bin:/bin"])
        defer { wev.stop() }
        var events: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }
        #expect(waitUntil(timeout: 10) { events.contains("activated") }, "wev did not get a window: \(events)")

        let rig = try ComputerRig(computer: "waylandDisplay: '\(sway.socket)'", screen: "waylandDisplay: '\(sway.socket)'",
                                  exec: "22222222-2222-4222-8222-222222222222")
        defer { rig.stop() }
        let frame = try rig.frame(width: 640)
        let act = rig.act
        func at(_ action: String, _ x: Int, _ y: Int) throws {
            try act(["action": .string(action), "x": .number(Double(x)), "y": .number(Double(y)), "displayFrameId": .string(frame), "refWidth": 640])
        }
        /// Where wev saw the pointer enter or move, in its surface's coordinates.
        func positions() -> [(Double, Double)] {
            events.split(separator: "\n").compactMap { line -> (Double, Double)? in
                guard line.contains("wl_pointer"), let r = line.range(of: "x, y: ") else { return nil }
                let nums = line[r.upperBound...].split(separator: ",").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
                return nums.count == 2 ? (nums[0], nums[1]) : nil
            }
        }

        try at("left_click", 100, 50)
        #expect(waitUntil(timeout: 5) { events.contains("button: 272 (left), state: 1 (pressed)") && events.contains("button: 272 (left), state: 0 (released)") }, "\(events.suffix(2000))")
        let first = try #require(positions().last)
        try at("right_click", 300, 200)
        #expect(waitUntil(timeout: 5) { events.contains("button: 273 (right), state: 1 (pressed)") }, "\(events.suffix(2000))")
        // The window's decorations shift both points alike: the step between them is the agent's.
        let second = try #require(positions().last)
        #expect(abs(second.0 - first.0 - 200) < 1 && abs(second.1 - first.1 - 150) < 1, "\(first) → \(second)")

        try act(["action": "type", "text": "hé!"])
        #expect(waitUntil(timeout: 5) { ["utf8: 'h'", "utf8: 'é'", "utf8: '!'"].allSatisfy(events.contains) }, "\(events.suffix(2000))")
        try act(["action": "key", "keys": "ctrl+a"])
        #expect(waitUntil(timeout: 5) { events.contains("depressed: 00000004: Control") && events.contains("sym: a ") }, "\(events.suffix(2000))")
        try at("scroll", 320, 240)
        #expect(waitUntil(timeout: 5) { events.contains("axis") }, "\(events.suffix(2000))")
        try act(["action": "__close_execution"])
        #expect(rig.gw.schemaErrors.isEmpty)
    }
}
