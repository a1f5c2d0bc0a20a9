import DesktopSession
import Kit
import Media
import Support
import WaylandSupport

/// Captures one KDE Plasma output through KWin's ScreenShot2 (KWinScreenShot): outputs and their
/// order come from the compositor's Wayland globals (as for wlroots), each grab is one screenshot.
/// A recording polls it; KWin 5.27 sends no screen-cast frames from a headless session, and a
/// screenshot of 720p costs tens of milliseconds, which keeps up with 10 fps.
final class KdeGrabber: ScreenGrabber {
    let bus: SessionBus
    let connection: WaylandConnection
    private let output: WaylandConnection.Output
    private var last: KWinScreenShot.Image?

    init(bus: SessionBus, connection: WaylandConnection, screenIndex: Int) throws(NodeError) {
        self.bus = bus
        self.connection = connection
        let outputs = connection.orderedOutputs
        guard outputs.indices.contains(screenIndex) else {
            throw NodeError.invalidRequest("screenIndex \(screenIndex) does not exist: KWin has \(outputs.count) output(s) " +
                                           "(\(outputs.map(\.name).joined(separator: ", ")))")
        }
        output = outputs[screenIndex]
    }

    var width: Int { last?.width ?? output.width }
    var height: Int { last?.height ?? output.height }
    var method: String { "kwin-screenshot2" }

    func grab<T>(includePointer: Bool, _ body: (PixelView) throws(NodeError) -> T) throws(NodeError) -> T {
        let image: KWinScreenShot.Image
        do throws(SessionBus.Failure) { image = try KWinScreenShot.capture(bus, output: output.name, includeCursor: includePointer) } catch {
            throw KdeScreen.refused(error)
        }
        last = image
        // withUnsafeBytes rethrows untyped errors: the typed one goes through a Result.
        let result = image.pixels.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> Result<T, NodeError> in
            Result { () throws(NodeError) -> T in
                try body(PixelView(base: raw.baseAddress!, width: image.width, height: image.height, bytesPerRow: image.bytesPerRow,
                                   layout: image.order == .bgrx ? .bgrx : .rgbx))
            }
        }
        return try result.get()
    }

    func isStillValid(screenIndex: Int) -> Bool { connection.stillShows(output, at: screenIndex) }

    func liveIdentity(screenIndex: Int) -> String? { connection.identity(ofOutputAt: screenIndex) }
}

/// What the KDE backend says when KWin refuses.
enum KdeScreen {
    static func refused(_ error: SessionBus.Failure) -> NodeError {
        if KWinScreenShot.isNotAuthorized(error) {
            let exe = (try? FileSystem.destinationOfSymbolicLink("/proc/self/exe")) ?? "this program"
            return ScreenError.unavailable("KWin refused the screenshot: it serves only programs its desktop entries grant " +
                "org.kde.KWin.ScreenShot2, and none names \(exe). The package installs \(KWinGrant.file) for \(KWinGrant.program); " +
                "a node run from elsewhere needs an entry of its own with Exec=\(exe) (see README, GNOME and KDE); then \(KWinGrant.refresh)")
        }
        return ScreenError.unavailable("KWin could not take the screenshot: \(error.description)")
    }
}
