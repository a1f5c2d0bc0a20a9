import DesktopSession
import Kit
import Support

/// GNOME's first monitor for the node's own RFB server: one Mutter RemoteDesktop session whose
/// screen cast (pointer drawn in) gives the frames and which takes the viewer's input, so the
/// viewer's coordinates are that cast's pixels. Closed when dropped.
final class GnomeRFBDesktop: RFBDesktop, @unchecked Sendable {  // made on one thread, then used only by its server's
    private let session: MutterRemoteDesktop
    private let stream: PipeWireStream
    private let monitor: MutterMonitor
    let name: String

    init(bus: SessionBus, pipewire: PipeWireRemote) throws(DesktopStreamError) {
        let monitors: [MutterMonitor]
        do throws(SessionBus.Failure) { monitors = try MutterDisplays.monitors(bus) } catch {
            throw .serverUnavailable("GNOME's monitor list: \(error.description)")
        }
        guard let first = monitors.first else { throw .serverUnavailable("GNOME reports no monitor") }
        monitor = first
        do throws(SessionBus.Failure) { session = try MutterRemoteDesktop(bus: bus, monitors: [first], cursor: .embedded) } catch {
            throw .serverUnavailable("GNOME refused a remote desktop session: \(error.description)")
        }
        guard let node = session.nodes[monitor.connector] else { throw .serverUnavailable("GNOME gave no screen cast for \(monitor.connector)") }
        do throws(PipeWireStream.Failure) {
            stream = try PipeWireStream(nodeId: node, remote: pipewire, name: "openclaw-node desktop.stream")
        } catch {
            throw .serverUnavailable("GNOME's screen cast of \(monitor.connector): \(error.description)")
        }
        name = "GNOME \(monitor.connector) (openclaw-node)"
    }

    var frameReadyFD: Int32 { stream.frameReadyFD }
    func drainFrameReady() { stream.drainFrameReady() }
    func withFrame<T>(_ body: (PipeWireFrame) -> T) -> T? { stream.withLatestFrame { f in body(f) } }

    private func sent(_ what: String, _ send: () throws(SessionBus.Failure) -> Void) throws(NodeError) {
        do throws(SessionBus.Failure) { try send() } catch { throw NodeError(.unavailable("desktop"), "\(what): \(error.description)") }
    }

    func pointer(x: Int, y: Int) throws(NodeError) {
        try sent("pointer") { () throws(SessionBus.Failure) in try session.move(connector: monitor.connector, x: Double(x), y: Double(y)) }
    }

    func button(_ code: Int32, down: Bool) throws(NodeError) {
        try sent("button") { () throws(SessionBus.Failure) in try session.button(code, down: down) }
    }

    func scroll(axis: UInt32, steps: Int32) throws(NodeError) {
        try sent("wheel") { () throws(SessionBus.Failure) in try session.scroll(axis: axis, steps: steps) }
    }

    func key(_ keysym: UInt32, down: Bool) throws(NodeError) {
        try sent("key") { () throws(SessionBus.Failure) in try session.keysym(keysym, down: down) }
    }
}
