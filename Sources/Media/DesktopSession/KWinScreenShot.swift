import Glibc
import Kit
import Support

/// KDE Plasma's screenshots through KWin's own API (org.kde.KWin.ScreenShot2, KWin 5.27 and 6):
/// KWin writes the raw image into a pipe the caller passes, and answers with its size, stride
/// and QImage format. KWin serves only programs granted the interface by a desktop entry
/// (`X-KDE-DBUS-Restricted-Interfaces=org.kde.KWin.ScreenShot2`) whose Exec= is the caller's own
/// executable; everyone else gets org.kde.KWin.ScreenShot2.Error.NoAuthorized.
public enum KWinScreenShot {
    public static let service = "org.kde.KWin"
    public static let path = "/org/kde/KWin/ScreenShot2"
    public static let interface = "org.kde.KWin.ScreenShot2"

    /// One captured screen: 32-bit pixels, top row first.
    public struct Image: Sendable {
        public let pixels: [UInt8]
        public let width: Int, height: Int, bytesPerRow: Int
        public let order: PipeWireFrame.ByteOrder
    }

    /// Whether KWin on `bus` offers ScreenShot2 (a Plasma session; the grant is another matter).
    public static func isOffered(on bus: SessionBus) -> Bool {
        bus.hasOwner(service) && (try? bus.call(service, path, "org.freedesktop.DBus.Properties", "Get",
                                                [.string(interface), .string("Version")], timeout: .seconds(2))) != nil
    }

    /// Whether the refusal means this program lacks KWin's grant.
    public static func isNotAuthorized(_ e: SessionBus.Failure) -> Bool { e.name.hasSuffix("NoAuthorized") }

    /// Captures the output named `output` (its Wayland name, e.g. "Virtual-1" or "HDMI-A-1").
    public static func capture(_ bus: SessionBus, output: String, includeCursor: Bool) throws(SessionBus.Failure) -> Image {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw SessionBus.Failure(name: "pipe", message: String(cString: strerror(errno))) }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        let readEnd = fds[0], writeEnd = fds[1]
        // A 64 KiB pipe makes KWin write a 720p image in 56 turns, each a wake-up on both sides
        // (about 100 ms in all); 4 MiB takes it in one or two where the system allows it
        // (F_SETPIPE_SZ, Linux's 1031; pipe-max-size limits an unprivileged user to 1 MiB).
        if fcntl(writeEnd, 1031, Int32(4 << 20)) < 0 { _ = fcntl(writeEnd, 1031, Int32(1 << 20)) }
        // KWin writes from a thread of its own, possibly before its answer arrives: read meanwhile,
        // so a full pipe never stalls it.
        let received = Locked<[UInt8]>([])
        let done = Wakeup()
        BlockingExecutor.start("kwin-screenshot") {
            var all: [UInt8] = []
            var buf = [UInt8](repeating: 0, count: 1 << 20)
            while true {
                let n = buf.withUnsafeMutableBytes { Glibc.read(readEnd, $0.baseAddress, $0.count) }
                if n > 0 { all += buf[0..<n]; continue }
                if n < 0 && errno == EINTR { continue }
                break
            }
            close(readEnd)
            received.withLock { $0 = all }
            done.signal()
        }
        let results: [DBusValue]
        do throws(SessionBus.Failure) {
            results = try bus.call(service, path, interface, "CaptureScreen",
                                   [.string(output), .options([("include-cursor", .bool(includeCursor)), ("native-resolution", .bool(true))]), .fd(writeEnd)])
        } catch {
            close(writeEnd)
            waitFor(done)
            throw error
        }
        // Ours closed, KWin's closed when it has written: the reader sees the end.
        close(writeEnd)
        waitFor(done)
        let info = results.first ?? .array("{sv}", [])
        guard let w = info["width"]?.int, let h = info["height"]?.int, let stride = info["stride"]?.int, let format = info["format"]?.int,
              w > 0, h > 0, w <= 16384, h <= 16384, stride >= w * 4 else {
            throw SessionBus.Failure(name: "reply", message: "KWin described the screenshot as \(info)")
        }
        // QImage formats: RGB32, ARGB32 and its premultiplied form are 0xAARRGGBB words (B, G, R, A
        // in memory); RGBX8888 and RGBA8888 (and premultiplied) are R, G, B, A bytes.
        let order: PipeWireFrame.ByteOrder
        switch format {
        case 4, 5, 6: order = .bgrx
        case 16, 17, 18: order = .rgbx
        default: throw SessionBus.Failure(name: "format", message: "KWin sent its screenshot in QImage format \(format), which this node cannot read")
        }
        let pixels = received.withLock { $0 }
        guard pixels.count >= stride * h else {
            throw SessionBus.Failure(name: "short", message: "KWin sent \(pixels.count) of the screenshot's \(stride * h) bytes")
        }
        return Image(pixels: pixels, width: w, height: h, bytesPerRow: stride, order: order)
    }

    private static func waitFor(_ done: Wakeup) {
        var p = pollfd(fd: done.fd, events: Int16(POLLIN), revents: 0)
        _ = poll(&p, 1, 10_000)
    }
}
