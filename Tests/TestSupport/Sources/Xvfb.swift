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
        guard waitUntil(timeout: 15, { FileManager.default.fileExists(atPath: socket) && Xvfb.accepts(socket) }) else {
            let log = proc.log
            proc.stop()
            throw TestFailure("Xvfb \(display) did not start: \(log)")
        }
    }

    func stop() { proc.stop() }

    /// The socket file appears before the server accepts; wait for a real connection.
    static func accepts(_ path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in raw.copyBytes(from: Array(path.utf8) + [0]) }
        return withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        } == 0
    }
    deinit { proc.stop() }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}
