import Config
import Glibc
import Kit
import Support

/// Which Chromium binary runs the canvas. Debian's /usr/bin/chromium* are `sh` wrappers; killing a
/// wrapper's PID would leave the browser running, so the real binary under /usr/lib/chromium is
/// used whenever the wrapper is named.
enum BrowserLocator {
    /// Debian's packages, then Raspberry Pi OS's `chromium-browser`.
    static let headlessCandidates = ["/usr/lib/chromium/chromium-headless-shell", "/usr/lib/chromium/chromium",
                                     "/usr/lib/chromium-browser/chromium-browser"]
    static let windowCandidates = ["/usr/lib/chromium/chromium", "/usr/lib/chromium-browser/chromium-browser"]

    static func find(configured: String?, window: Bool) -> Result<String, NodeError> {
        if let c = configured, !c.isEmpty {
            let path = c.contains("/") ? c : Subprocess.findExecutable(c)
            guard let path, FileSystem.isExecutableFile(path) else {
                return .failure(CanvasError.unavailable("capabilities.canvas.browser \"\(c)\" is not an executable"))
            }
            return .success(unwrapped(path))
        }
        for p in window ? windowCandidates : headlessCandidates where FileSystem.isExecutableFile(p) {
            return .success(p)
        }
        return .failure(CanvasError.unavailable(window
            ? "window mode needs Chromium: install it with `apt install chromium` (chromium-headless-shell cannot open windows)"
            : "no browser for the canvas: install chromium-headless-shell (apt install chromium-headless-shell)"))
    }

    /// /usr/bin/chromium → /usr/lib/chromium/chromium when the former is a shell script.
    static func unwrapped(_ path: String) -> String {
        // Two bytes, not the file: a configured path may be the 200 MB browser itself.
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return path }
        defer { close(fd) }
        var head: [UInt8] = [0, 0]
        guard read(fd, &head, 2) == 2, head == Array("#!".utf8) else { return path }
        let name = PathName.lastComponent(path)
        return ["/usr/lib/chromium/" + name, "/usr/lib/\(name)/\(name)"].first { FileSystem.isExecutableFile($0) } ?? path
    }
}
