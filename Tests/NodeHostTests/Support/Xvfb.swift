import Foundation

/// A real X server for a test: `Xvfb :N`, started on a free display number, stopped by PID.
final class Xvfb: @unchecked Sendable {
    let display: String
    private let proc: BackgroundProcess

    nonisolated(unsafe) private static var next = Int32(100 + getpid() % 400)
    private static let lock = NSLock()

    init(screens: [String] = ["640x480x24"]) throws {
        var n: Int32 = 0
        Xvfb.lock.withLock {
            repeat { n = Xvfb.next; Xvfb.next += 1 }
            while FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(n)") || FileManager.default.fileExists(atPath: "/tmp/.X\(n)-lock")
        }
        display = ":\(n)"
        var args = [display, "-nolisten", "tcp", "-noreset"]
        for (i, s) in screens.enumerated() { args += ["-screen", "\(i)", s] }
        proc = try BackgroundProcess("/usr/bin/Xvfb", args)
        let socket = "/tmp/.X11-unix/X\(n)"
        guard waitUntil(timeout: 15, { FileManager.default.fileExists(atPath: socket) }) else {
            let log = proc.log
            proc.stop()
            throw TestFailure("Xvfb \(display) did not start: \(log)")
        }
    }

    func stop() { proc.stop() }
    deinit { proc.stop() }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}
