import Glibc
import Support
import Testing

/// Which compositor socket the desktop capabilities use when nothing names one: the lowest-numbered
/// `wayland-N` that is a socket in XDG_RUNTIME_DIR (real sockets bound here, and the lock files and
/// stray names a runtime directory holds beside them).
@Suite struct WaylandSocketsTests {
    /// Binds a Unix socket at `path` (the descriptor is closed at once; the file stays).
    private func socketFile(_ path: String) {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            raw.copyBytes(from: Array(path.utf8))
            raw[path.utf8.count] = 0
        }
        let rc = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
        #expect(rc == 0, "bind \(path)")
    }

    @Test func theLowestNumberedSocketIsTheSessions() throws {
        let run = TestPaths.tempDir("xdg")
        defer { try? FileSystem.remove(run) }
        #expect(WaylandSockets.discovered(runtimeDirectory: run) == nil)
        // A lock file and a regular file under a socket's name are not compositors.
        try FileSystem.write([], to: run + "/wayland-0.lock")
        try FileSystem.write([], to: run + "/wayland-0")
        socketFile(run + "/wayland-3")
        socketFile(run + "/wayland-1")
        socketFile(run + "/wayland-x")
        socketFile(run + "/pipewire-0")
        #expect(WaylandSockets.discovered(runtimeDirectory: run) == "wayland-1")
        // The config's name, then WAYLAND_DISPLAY, win over what is found.
        #expect(WaylandSockets.display(configured: "wayland-9", environment: ["XDG_RUNTIME_DIR": run, "WAYLAND_DISPLAY": "wayland-3"]) == "wayland-9")
        #expect(WaylandSockets.display(configured: nil, environment: ["XDG_RUNTIME_DIR": run, "WAYLAND_DISPLAY": "wayland-3"]) == "wayland-3")
        #expect(WaylandSockets.display(configured: "", environment: ["XDG_RUNTIME_DIR": run, "WAYLAND_DISPLAY": ""]) == "wayland-1")
        #expect(WaylandSockets.display(configured: nil, environment: [:]) == nil)
    }
}
