import DesktopSession
import Glibc
import Kit
import Support
import WaylandSupport

/// KDE Plasma's first output for the node's own RFB server: frames are KWin screenshots
/// (ScreenShot2, pointer drawn in) taken on a thread of their own every `interval` — KWin 5.27
/// sends a headless session's screen casts no frames, and a screenshot is tens of milliseconds —
/// and the viewer's input goes to KWin's fake input. Both need the grant the package installs.
final class KdeRFBDesktop: RFBDesktop, @unchecked Sendable {  // the Wayland connection is used by the server's thread only; frames under a lock
    static let interval: Duration = .milliseconds(100)

    private let input: KWinFakeInput
    private let output: WaylandConnection.Output
    private let latest = Locked<(image: KWinScreenShot.Image, sequence: UInt64)?>(nil)
    private let ready = Wakeup()
    private let stopped = CancelFlag()
    let name: String

    init(bus: SessionBus, socket: String) throws(DesktopStreamError) {
        do throws(NodeError) {
            input = try KWinFakeInput(socket: socket, purpose: "the desktop in the OpenClaw gateway's viewer", unavailableCode: .unavailable("desktop"))
        } catch {
            throw .serverUnavailable(error.message)
        }
        guard let first = input.connection.orderedOutputs.first else { throw .serverUnavailable("KWin at \(socket) has no outputs") }
        output = first
        name = "KDE \(first.name) (openclaw-node)"
        // The first screenshot here: a refusal (no grant) ends the stream before it starts.
        let image: KWinScreenShot.Image
        do throws(SessionBus.Failure) { image = try KWinScreenShot.capture(bus, output: first.name, includeCursor: true) } catch {
            throw .serverUnavailable(KWinScreenShot.isNotAuthorized(error)
                ? "KWin refused the screenshot: the package's \(KWinGrant.file) grants it to \(KWinGrant.program) (\(KWinGrant.refresh))"
                : error.description)
        }
        latest.withLock { $0 = (image, 1) }
        let outputName = first.name, stop = stopped, latest = self.latest, ready = self.ready, address = bus.address
        BlockingExecutor.start("desktop-kwin-frames") {
            // A connection of its own: sd-bus objects are used by one thread.
            guard let bus = try? SessionBus(address: address) else { return }
            var sequence: UInt64 = 1
            while !stop.isCancelled {
                guard stop.sleep(milliseconds: Int(Self.interval.components.attoseconds / 1_000_000_000_000_000)) else { break }
                guard let next = try? KWinScreenShot.capture(bus, output: outputName, includeCursor: true) else { continue }
                sequence += 1
                latest.withLock { $0 = (next, sequence) }
                ready.signal()
            }
        }
    }

    deinit { stopped.cancel() }

    var frameReadyFD: Int32 { ready.fd }
    func drainFrameReady() { ready.drain() }

    func withFrame<T>(_ body: (PipeWireFrame) -> T) -> T? {
        latest.withLock { l -> T? in
            guard let l else { return nil }
            return l.image.pixels.withUnsafeBytes { raw in
                body(PipeWireFrame(base: raw.baseAddress!, width: l.image.width, height: l.image.height, bytesPerRow: l.image.bytesPerRow,
                                   order: l.image.order, sequence: l.sequence))
            }
        }
    }

    func pointer(x: Int, y: Int) throws(NodeError) { try input.move(on: output, x: x, y: y) }

    func button(_ code: Int32, down: Bool) throws(NodeError) {
        input.button(UInt32(code), down: down)
        try input.connection.roundtrip()
    }

    func scroll(axis: UInt32, steps: Int32) throws(NodeError) {
        input.scroll(axis: axis, notches: steps)
        try input.connection.roundtrip()
    }

    /// The viewer sends keysyms; KWin's fake input takes key codes: a US layout's. (Viewers send
    /// their own Shift presses around shifted characters.)
    func key(_ keysym: UInt32, down: Bool) throws(NodeError) {
        guard let k = USKeyCodes.code(for: keysym) else { return }
        input.key(k.code, down: down)
        try input.connection.roundtrip()
    }
}
