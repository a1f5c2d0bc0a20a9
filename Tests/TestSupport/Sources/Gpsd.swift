import Foundation
@testable import Support

/// True when something accepts TCP connections on 127.0.0.1:port.
func loopbackPortAccepts(_ port: Int) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var addr = sockaddr_in()
    addr.sin_family = sa_family_t(AF_INET)
    addr.sin_addr.s_addr = inet_addr("127.0.0.1")
    addr.sin_port = in_port_t(UInt16(port).bigEndian)
    return withUnsafePointer(to: &addr) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    } == 0
}

/// A Python helper from Tests/gpsd that prints {"port": N} and then event lines, and takes JSON
/// commands on stdin, each acknowledged with {"ok": …}.
final class GpsdScript: @unchecked Sendable {
    let server: PythonServer

    init(_ script: String, args: [String] = []) throws {
        server = try PythonServer(script: "../gpsd/" + script, args: args)
    }

    var port: Int { server.port }

    /// Sends one command and waits for its acknowledgement (skipping event lines).
    @discardableResult
    func command(_ cmd: JSONValue, timeout: TimeInterval = 10) throws -> [JSONValue] {
        server.send(cmd.jsonString())
        var events: [JSONValue] = []
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            guard let line = server.nextLine(timeout: deadline.timeIntervalSinceNow), let v = JSONValue.parse(line) else { break }
            if v["ok"] != nil { return events }
            events.append(v)
        }
        throw TestFailure("no acknowledgement for \(cmd.jsonString())")
    }

    /// Waits for an event line that has `key` (e.g. "client", "watch").
    func waitForEvent(_ key: String, timeout: TimeInterval = 10) -> JSONValue? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            guard let line = server.nextLine(timeout: deadline.timeIntervalSinceNow), let v = JSONValue.parse(line) else { return nil }
            if v[key] != nil { return v }
        }
        return nil
    }

    func stop() { server.stop() }
}

/// Real gpsd on loopback, reading NMEA from the test's feeder (Tests/gpsd/nmea_feeder.py):
/// `gpsd -N -n -S <port> -F <dir>/gpsd.sock tcp://127.0.0.1:<feeder>`. Every process is started
/// here and stopped by PID.
final class GpsdHarness: @unchecked Sendable {
    static let gpsdBinary = "/usr/sbin/gpsd"
    static var available: Bool { FileManager.default.isExecutableFile(atPath: gpsdBinary) }

    let feeder: GpsdScript
    let port: Int
    let dir: String
    private(set) var gpsd: BackgroundProcess?
    let withDevice: Bool

    /// `fix`: the feeder's first state (nil = no fix). `interval`: seconds between NMEA cycles.
    init(fix: JSONValue? = nil, interval: Double = 0.2, withDevice: Bool = true) throws {
        var args = ["--interval", String(interval)]
        if let fix { args += ["--fix", fix.jsonString()] }
        feeder = try GpsdScript("nmea_feeder.py", args: args)
        port = try freeLoopbackPort()
        dir = TestPaths.tempDir("gpsd")
        self.withDevice = withDevice
        try startGpsd()
    }

    /// Starts gpsd on `port` and waits until it accepts clients (and, with a device, until it
    /// has connected to the feeder).
    func startGpsd() throws {
        var args = ["-N", "-n", "-S", String(port), "-F", dir + "/gpsd.sock"]
        if withDevice { args.append("tcp://127.0.0.1:\(feeder.port)") }
        let p = try BackgroundProcess(GpsdHarness.gpsdBinary, args)
        gpsd = p
        guard waitUntil(timeout: 10, { loopbackPortAccepts(port) }) else {
            throw TestFailure("gpsd did not listen on \(port): \(p.log)")
        }
        if withDevice, feeder.waitForEvent("client", timeout: 10) == nil {
            throw TestFailure("gpsd did not connect to the feeder: \(p.log)")
        }
    }

    /// SIGKILL, as a crash would (no goodbye to clients beyond the kernel closing the sockets).
    func killGpsd() {
        guard let p = gpsd else { return }
        p.child.signal(SIGKILL)
        p.child.wait()
        gpsd = nil
    }

    func feed(_ cmd: JSONValue) throws { try feeder.command(cmd) }

    func stop() {
        if let p = gpsd { p.stop(grace: 2) }
        gpsd = nil
        feeder.stop()
        try? FileManager.default.removeItem(atPath: dir)
    }
}

