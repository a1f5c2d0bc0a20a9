@testable import Config
import Foundation
@testable import HostPresence
@testable import Kit
@testable import NodeCLI
@testable import Registry
@testable import Store
@testable import Support

/// A private D-Bus daemon for one test (the machine's system bus is never touched).
final class PrivateBus: @unchecked Sendable {
    let dir: String
    let address: String
    private let daemon: BackgroundProcess

    init() throws {
        dir = TestPaths.tempDir("bus")
        let socket = dir + "/bus"
        address = "unix:path=" + socket
        let config = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>system</type>
              <listen>\(address)</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow user="*"/>
                <allow own="*"/>
                <allow send_destination="*"/>
                <allow receive_sender="*"/>
              </policy>
            </busconfig>
            """
        _ = FileManager.default.createFile(atPath: dir + "/bus.conf", contents: Data(config.utf8))
        daemon = try BackgroundProcess("/usr/bin/dbus-daemon", ["--config-file=\(dir)/bus.conf", "--nofork", "--nopidfile"])
        guard waitUntil(timeout: 10, { FileManager.default.fileExists(atPath: socket) }) else {
            throw TestFailure("dbus-daemon did not start: \(daemon.log)")
        }
    }

    func stop() {
        daemon.stop()
        try? FileManager.default.removeItem(atPath: dir)
    }
}
