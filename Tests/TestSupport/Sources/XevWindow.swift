import Foundation
import Support

/// `xev` (x11-utils) as the real X client a test's input must reach: a window of its own that
/// prints every event it selects to a log file.
///
/// Two waits that used to be guesses are events here. The window is used once the server says it
/// is viewable (`xwininfo`), not after half a second. And what xev printed is read after a
/// barrier: the test changes a property on xev's window (`xprop`), and the server queues that
/// PropertyNotify behind every event of the input it handled before — the node's XTest input is
/// handled before its invoke answers (it syncs) — so once xev has printed the property change, it
/// has printed all of that input.
final class XevWindow: @unchecked Sendable {
    let display: String
    let log: String
    private let dir: String
    private let process: BackgroundProcess
    private let windowId: String
    private let barriers = Locked(0)

    /// `geometry`: xev's `-geometry` (`WxH+X+Y`); `events`: its `-event` masks (keyboard, button, mouse …).
    init(display: String, geometry: String, events: [String]) throws {
        self.display = display
        dir = TestPaths.tempDir("xev")
        log = dir + "/xev.log"
        let masks = (events + ["property"]).map { "-event \($0)" }.joined(separator: " ")
        process = try BackgroundProcess("/bin/sh", ["-c", "exec /usr/bin/xev -display \(display) -geometry \(geometry) \(masks) > \(log)"])
        var id: String?
        _ = waitUntil(timeout: 30) {
            guard let info = try? runProcess("/usr/bin/xwininfo", ["-display", display, "-name", "Event Tester"]),
                  info.code == 0, info.stdout.contains("Map State: IsViewable") else { return false }
            id = info.stdout.split(separator: "\n").first { $0.contains("Window id:") }?
                .split(separator: " ").first { $0.hasPrefix("0x") }.map(String.init)
            return id != nil
        }
        guard let id else {
            process.stop()
            throw TestFailure("xev's window was not mapped on \(display) within 30 s: \(process.log)")
        }
        windowId = id
    }

    /// What xev printed so far, as it is now (for a wait that looks again and again).
    var current: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

    /// What xev printed, including every event of the input the server handled before this call.
    var settled: String {
        let n = barriers.withLock { $0 += 1; return $0 }
        _ = try? runProcess("/usr/bin/xprop", ["-display", display, "-id", windowId, "-f", "_OCN_BARRIER", "32c", "-set", "_OCN_BARRIER", "\(n)"])
        _ = waitUntil(timeout: 20) { current.components(separatedBy: "(_OCN_BARRIER)").count - 1 >= n }
        return current
    }

    func stop() {
        process.stop()
        try? FileManager.default.removeItem(atPath: dir)
    }
}
