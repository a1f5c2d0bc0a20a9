import CX11Capture
import Config
import Kit
import Media
import Support
import X11Support

/// Captures one X11 target (a RandR monitor or a whole X screen) with MIT-SHM, or with
/// XGetImage when shared memory is off or refused (remote display, another IPC namespace).
/// Owns its connection and shared-memory image; one thread at a time.
final class X11Grabber: ScreenGrabber {
    let connection: X11Connection
    let target: X11Target
    /// nil = XGetImage.
    private let shared: SharedMemoryImage?
    private let root: Window

    init(connection: X11Connection, screenIndex: Int, useSharedMemory: Bool) throws(NodeError) {
        self.connection = connection
        let display = connection.name
        target = try X11Targets.target(screenIndex, on: connection.display, name: connection.name)
        root = connection.root(target.screen)
        shared = useSharedMemory
            ? SharedMemoryImage(connection: connection, screen: target.screen, width: target.width, height: target.height)
            : nil
        if let shared, X11PixelFormat.layout(of: shared.image) == nil {
            throw ScreenError.unavailable("X display \(display) uses a pixel format this node cannot read " +
                                          "(\(X11PixelFormat.describe(shared.image))); run the X server at depth 16 or 24")
        }
    }

    var width: Int { target.width }
    var height: Int { target.height }
    var method: String { shared == nil ? "XGetImage" : "XShm" }

    func grab<T>(includePointer: Bool, _ body: (PixelView) throws(NodeError) -> T) throws(NodeError) -> T {
        if let shared {
            guard shared.capture(root, x: target.x, y: target.y) else { throw lostCapture() }
            return try deliver(shared.image, includePointer: includePointer, body)
        }
        connection.resetErrors()
        guard let image = XGetImage(connection.display, root, Int32(target.x), Int32(target.y), UInt32(target.width),
                                    UInt32(target.height), cx11cap_all_planes(), ZPixmap) else { throw lostCapture() }
        // XGetImage's image (and its pixels) belong to this call.
        defer { _ = cx11cap_destroy_image(image) }
        return try deliver(image, includePointer: includePointer, body)
    }

    func watchChanges(includePointer: Bool) -> (any ScreenChangeWatch)? {
        X11DamageWatch(connection: connection, target: target, includePointer: includePointer)
    }

    func isStillValid(screenIndex: Int) -> Bool {
        guard !connection.isDead, let now = try? X11Targets.target(screenIndex, on: connection.display, name: connection.name) else { return false }
        return now == target && !connection.isDead
    }

    func liveIdentity(screenIndex: Int) -> String? {
        guard !connection.isDead, let now = try? X11Targets.target(screenIndex, on: connection.display, name: connection.name) else { return nil }
        return now.identity(display: connection.name)
    }

    private func deliver<T>(_ image: UnsafeMutablePointer<XImage>, includePointer: Bool,
                            _ body: (PixelView) throws(NodeError) -> T) throws(NodeError) -> T {
        let i = image.pointee
        guard let layout = X11PixelFormat.layout(of: image), let data = i.data else {
            throw ScreenError.unavailable("X display \(connection.name) uses a pixel format this node cannot read " +
                                          "(\(X11PixelFormat.describe(image))); run the X server at depth 16 or 24")
        }
        let pixels = UnsafeMutableRawPointer(data)
        if includePointer {
            CursorCompositor.draw(on: connection, target: target, pixels: pixels, bytesPerRow: Int(i.bytes_per_line), layout: layout)
        }
        let view = PixelView(base: UnsafeRawPointer(pixels), width: Int(i.width), height: Int(i.height),
                             bytesPerRow: Int(i.bytes_per_line), layout: layout)
        return try body(view)
    }

    private func lostCapture() -> NodeError {
        if connection.isDead { return ScreenError.unavailable("lost the connection to X display \(connection.name); retry") }
        return ScreenError.unavailable("capturing \(target.label) of X display \(connection.name) failed " +
                                       "(X error \(connection.lastError)); the screen layout may have changed, retry")
    }
}
