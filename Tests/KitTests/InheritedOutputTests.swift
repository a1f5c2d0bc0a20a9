import Foundation
@testable import Support
import Testing

/// A child that makes its standard output or error non-blocking (Node.js does, at start) must not
/// do it to ours: writes to a non-blocking pipe fail with EAGAIN whenever the reader lags, and
/// the lines are lost (the test runner's own output was, this way, until the end of its summary).
@Suite struct InheritedOutputTests {
    static func nonBlocking(_ fd: Int32) -> Bool { fcntl(fd, F_GETFL) & O_NONBLOCK != 0 }

    @Test func aReopenedPipeHasFlagsOfItsOwnAndReachesTheSameReader() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        let own = try #require(Subprocess.privateDescription(of: fds[1]))
        defer { close(own) }
        #expect(fcntl(own, F_SETFL, fcntl(own, F_GETFL) | O_NONBLOCK) == 0)
        #expect(Self.nonBlocking(own))
        #expect(!Self.nonBlocking(fds[1]), "the original description kept its flags")
        #expect(write(own, "hi", 2) == 2)
        var buffer = [UInt8](repeating: 0, count: 2)
        #expect(read(fds[0], &buffer, 2) == 2 && buffer == Array("hi".utf8))
        // A regular file is not reopened: its offset is shared on purpose.
        let file = NSTemporaryDirectory() + "ocn-reopen-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: file) }
        let f = open(file, O_WRONLY | O_CREAT, 0o600)
        defer { close(f) }
        #expect(Subprocess.privateDescription(of: f) == nil)
    }

    /// Through the real path: this process's stderr (a pipe under `swift test`, as under a
    /// supervisor) inherited by a child that makes it non-blocking.
    @Test func aChildThatMakesItsStderrNonBlockingLeavesOursAlone() throws {
        guard let probe = Subprocess.privateDescription(of: 2) else { return }  // a file or socket: nothing to reopen
        close(probe)
        let script = "import fcntl, os; fcntl.fcntl(2, fcntl.F_SETFL, fcntl.fcntl(2, fcntl.F_GETFL) | os.O_NONBLOCK)"
        let child = try Subprocess.spawn("/usr/bin/python3", ["-c", script], stdout: .null, stderr: .inherit)
        #expect(child.wait() == 0)
        let reached = Self.nonBlocking(2)
        // Put it back whatever happened: the rest of the run writes its output there.
        _ = fcntl(2, F_SETFL, fcntl(2, F_GETFL) & ~O_NONBLOCK)
        #expect(!reached, "the child's fcntl reached this process's stderr")
    }
}
