import CXTest
import Glibc
import Kit
import Support

/// Notices a person at the desk: XInput2 raw key, button and motion events from any device except
/// the core XTEST devices this node injects through. Runs on its own thread with its own X
/// connection while the daemon runs; `onInput` is called (often) for every such event.
final class UserInputWatcher: @unchecked Sendable {
    private let lock = Lock()
    private var stopped = false

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
        DetachedThread.start(name: "user-input") { [self] in
            let d = OpaquePointer(bitPattern: display)!
            var pfd = pollfd(fd: cxtest_connection_number(d), events: Int16(POLLIN), revents: 0)
            var ev = XEvent()
            while !lock.withLock({ stopped }) {
                _ = poll(&pfd, 1, 200)
                while XPending(d) > 0 {
                    XNextEvent(d, &ev)
                    let source = cxtest_raw_event_source(d, &ev, xiOpcode)
                    if source >= 0 && !ours.contains(source) { onInput() }
                }
            }
            XCloseDisplay(d)
        }
    }

    /// Ends the thread (within 200 ms); it closes its connection.
    func stop() { lock.withLock { stopped = true } }

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
