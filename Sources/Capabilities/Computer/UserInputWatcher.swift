import CXTest
import Glibc
import Kit
import Support

/// Notices a person at the desk: XInput2 raw key, button and motion events from any device except
/// the core XTEST devices this node injects through. Runs on its own thread with its own X
/// connection while the daemon runs; `onInput` is called (often) for every such event.
final class UserInputWatcher: Sendable {
    /// Signalled by `stop()`; the thread's poll() waits on it next to the X connection.
    private let stopping = Wakeup()

    init(display name: String, onInput: @escaping @Sendable () -> Void) throws(NodeError) {
        guard let d = XOpenDisplay(name) else { throw NodeError.unavailable("cannot connect to X display \(name)") }
        var opcode: Int32 = 0, event: Int32 = 0, error: Int32 = 0
        var major: Int32 = 2, minor: Int32 = 0
        guard XQueryExtension(d, "XInputExtension", &opcode, &event, &error) != 0, XIQueryVersion(d, &major, &minor) == Success else {
            XCloseDisplay(d)
            throw NodeError.unavailable("X display \(name) has no XInput 2")
        }
        let ours = Self.injectionDevices(d)
        guard !ours.isEmpty else {
            XCloseDisplay(d)
            throw NodeError.unavailable("X display \(name) shows no core XTEST devices")
        }
        _ = cxtest_select_raw_input(d, cxtest_root_window(d, cxtest_default_screen(d)))
        XSync(d, 0)
        let display = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(d)))
        let xiOpcode = opcode
        BlockingExecutor.startLoop(name: "user-input") { [self] in
            let d = OpaquePointer(bitPattern: display)!
            let fd = cxtest_connection_number(d)
            var ev = XEvent()
            while true {
                // Xlib's queue is empty after this, so the next wait is for the socket itself.
                while XPending(d) > 0 {
                    XNextEvent(d, &ev)
                    let source = cxtest_raw_event_source(d, &ev, xiOpcode)
                    if source >= 0 && !ours.contains(source) { onInput() }
                }
                if stopping.wait(for: fd) == .woken { break }
            }
            XCloseDisplay(d)
        }
    }

    /// Ends the thread at once (it is woken, not polling); it closes its connection.
    func stop() { stopping.signal() }

    /// The slave devices XTestFake* events come from: the XTEST devices of the core master pair.
    private static func injectionDevices(_ d: OpaquePointer) -> Set<Int32> {
        var count: Int32 = 0
        guard let info = XIQueryDevice(d, XIAllDevices, &count) else { return [] }
        defer { XIFreeDeviceInfo(info) }
        var out = Set<Int32>()
        for i in 0..<Int(count) {
            let name = info[i].name.map { String(cString: $0) } ?? ""
            if name == "Virtual core XTEST pointer" || name == "Virtual core XTEST keyboard" { out.insert(info[i].deviceid) }
        }
        return out
    }
}
