import Config
import FoundationEssentials
import Glibc
import Kit
import Support
import X11Support

/// Opens a grabber on the configured backend. `auto` takes X11 when the display answers, else the
/// framebuffer; when neither works the error lists what was tried and what to change (including
/// that Wayland-only sessions cannot be captured yet).
struct ScreenSources: Sendable {
    let settings: ScreenSettings

    /// What a capture would use right now; X11 comes with its open connection.
    private enum Resolved {
        case x11(X11Connection)
        case framebuffer(String)
    }

    func open(screenIndex: Int) throws(NodeError) -> any ScreenGrabber {
        switch try resolve() {
        case .x11(let connection):
            return try X11Grabber(connection: connection, screenIndex: screenIndex, useSharedMemory: settings.useSharedMemory)
        case .framebuffer(let path):
            return try FramebufferGrabber(path: path, screenIndex: screenIndex)
        }
    }

    /// Whether a capture could start now (for `caps`, doctor and the connect manifest). Cheaper
    /// than `open`: no shared-memory image is set up.
    func probe() -> Availability {
        do throws(NodeError) {
            switch try resolve() {
            case .x11(let connection):
                if X11Targets.list(connection.display).isEmpty { return .unavailable("X display \(connection.name) has no screens") }
            case .framebuffer(let path):
                _ = try FramebufferDevice(path: path).visible()
            }
            return .available
        } catch {
            return .unavailable(error.message)
        }
    }

    private func resolve() throws(NodeError) -> Resolved {
        switch settings.backend {
        case .x11:
            guard let display = settings.display else {
                throw ScreenError.unavailable("capabilities.screen.backend is \"x11\" but no X display is known: DISPLAY is unset " +
                                              "and capabilities.screen.display is not configured" + waylandNote)
            }
            return .x11(try X11Connection(name: display))
        case .fbdev:
            return .framebuffer(settings.framebuffer)
        case .auto:
            var tried: [String] = []
            if let display = settings.display {
                do throws(NodeError) { return .x11(try X11Connection(name: display)) }
                catch { tried.append("X display \(display) is not reachable (is it running; may this user connect: XAUTHORITY?)") }
            } else {
                tried.append("no X display (DISPLAY is unset and capabilities.screen.display is not configured)")
            }
            if FileManager.default.fileExists(atPath: settings.framebuffer) { return .framebuffer(settings.framebuffer) }
            tried.append("no framebuffer at \(settings.framebuffer) (capabilities.screen.fbdev)")
            throw ScreenError.unavailable("nothing to capture: " + tried.joined(separator: "; ") + waylandNote)
        }
    }

    private var waylandNote: String {
        guard let wayland = settings.wayland else { return "" }
        return ". This looks like a Wayland session (\(wayland)): Wayland screen capture is not supported " +
               "yet; point capabilities.screen.display at an X server (XWayland shows only X11 windows) or use backend \"fbdev\""
    }
}
