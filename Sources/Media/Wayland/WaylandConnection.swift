import CWaylandClient
import CWaylandProtocols
import Glibc
import Kit
import Support

/// One connection to a Wayland compositor: the globals it offers, its outputs (with the name and
/// logical position xdg-output gives), and an event loop with a deadline. Used by one thread at
/// a time; the compositor's events are dispatched only inside `wait(until:)`.
public final class WaylandConnection {
    public struct Global: Sendable { public let name: UInt32; public let interface: String; public let version: UInt32 }

    /// An output and what the compositor said about it.
    public final class Output {
        public let globalName: UInt32
        public let proxy: OpaquePointer
        var xdg: OpaquePointer?
        /// The compositor removed this output; its proxies are destroyed with the connection.
        public internal(set) var removed = false
        public internal(set) var name = ""
        public internal(set) var x = 0, y = 0
        public internal(set) var width = 0, height = 0   // current mode, in pixels
        public internal(set) var scale = 1
        public internal(set) var transform = 0
        init(globalName: UInt32, proxy: OpaquePointer) { self.globalName = globalName; self.proxy = proxy }
        /// What displayFrameId is derived from: a different value means a different picture geometry.
        public var identity: String { "wayland:\(name):\(width)x\(height)@\(x),\(y):t\(transform):s\(scale)" }
    }

    public let socket: String
    /// The error code failures carry (the screen's or computer control's "…_UNAVAILABLE").
    public let unavailableCode: NodeError.Code
    public let display: OpaquePointer
    private let registry: OpaquePointer
    public private(set) var globals: [Global] = []
    public private(set) var outputs: [Output] = []
    private var retired: [Output] = []
    public private(set) var shm: OpaquePointer?
    public private(set) var screencopy: OpaquePointer?
    public private(set) var screencopyVersion: UInt32 = 0
    private var xdgOutputManager: OpaquePointer?
    public private(set) var seat: OpaquePointer?
    /// ext_idle_notifier_v1 (newer compositors) and org_kde_kwin_idle (sway 1.7): presence.
    public private(set) var idleNotifier: OpaquePointer?
    public private(set) var kdeIdle: OpaquePointer?
    /// Input injection for computer.act: wlroots' virtual pointer (v2 binds a pointer to an output)
    /// and the virtual keyboard.
    public private(set) var virtualPointerManager: OpaquePointer?
    public private(set) var virtualPointerVersion: UInt32 = 0
    public private(set) var virtualKeyboardManager: OpaquePointer?
    /// KWin's fake input (KDE Plasma): offered only to programs a desktop entry grants it.
    public private(set) var kdeFakeInput: OpaquePointer?
    public private(set) var kdeFakeInputVersion: UInt32 = 0
    /// The data-control clipboard (wlroots' protocol; KWin offers it too): WaylandClipboard.
    public private(set) var dataControlManager: OpaquePointer?

    /// `socket`: a name in $XDG_RUNTIME_DIR ("wayland-1") or an absolute path.
    public init(socket: String, unavailableCode: NodeError.Code = .unavailable("screen")) throws(NodeError) {
        self.socket = socket
        self.unavailableCode = unavailableCode
        guard let d = wl_display_connect(socket) else {
            throw NodeError(unavailableCode, "cannot connect to the Wayland compositor at \(socket) (\(String(cString: strerror(errno)))); " +
                                          "is it running, and is XDG_RUNTIME_DIR the session's?")
        }
        display = d
        guard let r = wl_display_get_registry(d) else { wl_display_disconnect(d); throw NodeError(unavailableCode, "Wayland registry unavailable") }
        registry = r
        wl_registry_add_listener(r, WaylandListeners.registry, Unmanaged.passUnretained(self).toOpaque())
        // First round trip: the globals; the second: each output's geometry, mode and name.
        try roundtrip()
        try roundtrip()
    }

    deinit {
        for o in outputs + retired { if let x = o.xdg { zxdg_output_v1_destroy(x) }; wl_proxy_destroy(o.proxy) }
        if let screencopy { zwlr_screencopy_manager_v1_destroy(screencopy) }
        if let xdgOutputManager { zxdg_output_manager_v1_destroy(xdgOutputManager) }
        if let shm { wl_proxy_destroy(shm) }
        if let idleNotifier { ext_idle_notifier_v1_destroy(idleNotifier) }
        if let virtualPointerManager { zwlr_virtual_pointer_manager_v1_destroy(virtualPointerManager) }
        if let virtualKeyboardManager { wl_proxy_destroy(virtualKeyboardManager) }
        if let kdeIdle { wl_proxy_destroy(kdeIdle) }
        if let kdeFakeInput { org_kde_kwin_fake_input_destroy(kdeFakeInput) }
        if let dataControlManager { zwlr_data_control_manager_v1_destroy(dataControlManager) }
        if let seat { wl_proxy_destroy(seat) }
        wl_proxy_destroy(registry)
        wl_display_disconnect(display)
    }

    public var isAlive: Bool { wl_display_get_error(display) == 0 }

    /// Outputs in screenIndex order: left to right, then top to bottom, as the compositor lays them out.
    public var orderedOutputs: [Output] { outputs.filter { $0.width > 0 && $0.height > 0 }.sorted { ($0.x, $0.y, $0.globalName) < ($1.x, $1.y, $1.globalName) } }

    /// Dispatches the compositor's events until `done()` holds or the deadline passes.
    public func wait(until done: () -> Bool, timeout: Duration, what: String) throws(NodeError) {
        let deadline = ContinuousClock.now + timeout
        while !done() {
            while wl_display_prepare_read(display) != 0 { _ = wl_display_dispatch_pending(display) }
            if done() { wl_display_cancel_read(display); return }
            _ = wl_display_flush(display)
            let left = deadline - ContinuousClock.now
            guard left > .zero else { wl_display_cancel_read(display); throw NodeError(unavailableCode, "the Wayland compositor did not answer (\(what)) in time") }
            var pfd = pollfd(fd: wl_display_get_fd(display), events: Int16(POLLIN), revents: 0)
            let ms = Int32(min(1000, max(1, left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000)))
            let r = poll(&pfd, 1, ms)
            if r <= 0 { wl_display_cancel_read(display); if r < 0 && errno != EINTR { throw lost() }; continue }
            guard wl_display_read_events(display) == 0, wl_display_dispatch_pending(display) >= 0 else { throw lost() }
        }
    }

    /// Dispatches whatever the compositor has sent, without waiting. False when the connection is gone.
    public func pump() -> Bool {
        while wl_display_prepare_read(display) != 0 { if wl_display_dispatch_pending(display) < 0 { return false } }
        _ = wl_display_flush(display)
        var pfd = pollfd(fd: wl_display_get_fd(display), events: Int16(POLLIN), revents: 0)
        if poll(&pfd, 1, 0) > 0 {
            guard wl_display_read_events(display) == 0 else { return false }
        } else {
            wl_display_cancel_read(display)
        }
        return wl_display_dispatch_pending(display) >= 0 && isAlive
    }

    /// Sends what is queued and waits for the compositor to have handled it (and answered).
    /// Whether `output` is still the compositor's output number `index` (connection alive, same
    /// output, not gone to zero size): a cached grabber's check before reuse.
    public func stillShows(_ output: Output, at index: Int) -> Bool {
        guard isAlive, (try? roundtrip()) != nil else { return false }
        let outputs = orderedOutputs
        return outputs.indices.contains(index) && outputs[index] === output && output.width > 0
    }

    /// What output number `index` is now, for displayFrameId; nil when it cannot be read.
    public func identity(ofOutputAt index: Int) -> String? {
        guard (try? roundtrip()) != nil else { return nil }
        let outputs = orderedOutputs
        return outputs.indices.contains(index) ? outputs[index].identity : nil
    }

    /// The same without a round trip: from the events the compositor has sent so far. Enough
    /// around a screencopy capture, whose frame events arrive in order with the outputs' own: an
    /// output change made before the copy finished is read before the frame is ready.
    public func identityFromEvents(ofOutputAt index: Int) -> String? {
        guard pump() else { return nil }
        let outputs = orderedOutputs
        return outputs.indices.contains(index) ? outputs[index].identity : nil
    }

    public func roundtrip() throws(NodeError) {
        guard let cb = wl_display_sync(display) else { throw lost() }
        let flag = UnsafeMutablePointer<Bool>.allocate(capacity: 1)
        flag.initialize(to: false)
        defer { wl_callback_destroy(cb); flag.deallocate() }
        wl_callback_add_listener(cb, WaylandListeners.callback, flag)
        try wait(until: { flag.pointee }, timeout: .seconds(5), what: "sync")
    }

    public func lost() -> NodeError {
        NodeError(unavailableCode, "the Wayland connection to \(socket) was lost (\(String(cString: strerror(wl_display_get_error(display)))))")
    }

    // MARK: registry events

    fileprivate func announce(name: UInt32, interface: String, version: UInt32) {
        globals.append(Global(name: name, interface: interface, version: version))
        switch interface {
        case "wl_shm":
            shm = bind(name, ocn_wl_shm_interface(), 1)
        case "wl_output":
            guard let p = bind(name, ocn_wl_output_interface(), min(version, 4)) else { return }
            let o = Output(globalName: name, proxy: p)
            outputs.append(o)
            wl_output_add_listener(p, WaylandListeners.output, Unmanaged.passUnretained(o).toOpaque())
            attachXdg(o)
        case "zxdg_output_manager_v1":
            xdgOutputManager = bind(name, ocn_xdg_output_manager_interface(), min(version, 3))
            for o in outputs where o.xdg == nil { attachXdg(o) }
        case "wl_seat" where seat == nil:
            seat = bind(name, ocn_wl_seat_interface(), 1)
        case "ext_idle_notifier_v1":
            idleNotifier = bind(name, ocn_idle_notifier_interface(), 1)
        case "org_kde_kwin_idle":
            kdeIdle = bind(name, ocn_kde_idle_interface(), 1)
        case "zwlr_virtual_pointer_manager_v1":
            virtualPointerVersion = min(version, 2)
            virtualPointerManager = bind(name, ocn_virtual_pointer_manager_interface(), virtualPointerVersion)
        case "zwp_virtual_keyboard_manager_v1":
            virtualKeyboardManager = bind(name, ocn_virtual_keyboard_manager_interface(), 1)
        case "org_kde_kwin_fake_input":
            kdeFakeInputVersion = min(version, 4)
            kdeFakeInput = bind(name, ocn_kde_fake_input_interface(), kdeFakeInputVersion)
        case "zwlr_data_control_manager_v1":
            dataControlManager = bind(name, ocn_data_control_manager_interface(), 1)
        case "zwlr_screencopy_manager_v1":
            screencopyVersion = min(version, 3)
            screencopy = bind(name, ocn_screencopy_manager_interface(), screencopyVersion)
        default:
            break
        }
    }

    fileprivate func remove(name: UInt32) {
        globals.removeAll { $0.name == name }
        if let i = outputs.firstIndex(where: { $0.globalName == name }) {
            // A grabber may still hold it: keep the proxy until the connection goes.
            let o = outputs.remove(at: i)
            o.removed = true
            retired.append(o)
        }
    }

    private func bind(_ name: UInt32, _ interface: UnsafePointer<wl_interface>?, _ version: UInt32) -> OpaquePointer? {
        wl_registry_bind(registry, name, interface, version).map { OpaquePointer($0) }
    }

    private func attachXdg(_ o: Output) {
        guard let manager = xdgOutputManager, let x = zxdg_output_manager_v1_get_xdg_output(manager, o.proxy) else { return }
        o.xdg = x
        zxdg_output_v1_add_listener(x, WaylandListeners.xdgOutput, Unmanaged.passUnretained(o).toOpaque())
    }
}

/// The C listener tables: static, non-capturing functions that find their Swift object through the
/// proxy's user data.
public enum WaylandListeners {
    nonisolated(unsafe) static let registry: UnsafeMutablePointer<wl_registry_listener> = make(wl_registry_listener(
        global: { data, _, name, interface, version in
            guard let data, let interface else { return }
            Unmanaged<WaylandConnection>.fromOpaque(data).takeUnretainedValue()
                .announce(name: name, interface: String(cString: interface), version: version)
        },
        global_remove: { data, _, name in
            guard let data else { return }
            Unmanaged<WaylandConnection>.fromOpaque(data).takeUnretainedValue().remove(name: name)
        }))

    nonisolated(unsafe) static let output: UnsafeMutablePointer<wl_output_listener> = make(wl_output_listener(
        geometry: { data, _, _, _, _, _, _, _, _, transform in
            guard let data else { return }
            Unmanaged<WaylandConnection.Output>.fromOpaque(data).takeUnretainedValue().transform = Int(transform)
        },
        mode: { data, _, flags, width, height, _ in
            guard let data, flags & UInt32(WL_OUTPUT_MODE_CURRENT.rawValue) != 0 else { return }
            let o = Unmanaged<WaylandConnection.Output>.fromOpaque(data).takeUnretainedValue()
            o.width = Int(width); o.height = Int(height)
        },
        done: { _, _ in },
        scale: { data, _, factor in
            guard let data else { return }
            Unmanaged<WaylandConnection.Output>.fromOpaque(data).takeUnretainedValue().scale = Int(factor)
        },
        name: { data, _, name in
            guard let data, let name else { return }
            let o = Unmanaged<WaylandConnection.Output>.fromOpaque(data).takeUnretainedValue()
            if o.name.isEmpty { o.name = String(cString: name) }
        },
        description: { _, _, _ in }))

    nonisolated(unsafe) static let xdgOutput: UnsafeMutablePointer<zxdg_output_v1_listener> = make(zxdg_output_v1_listener(
        logical_position: { data, _, x, y in
            guard let data else { return }
            let o = Unmanaged<WaylandConnection.Output>.fromOpaque(data).takeUnretainedValue()
            o.x = Int(x); o.y = Int(y)
        },
        logical_size: { _, _, _, _ in },
        done: { _, _ in },
        name: { data, _, name in
            guard let data, let name else { return }
            Unmanaged<WaylandConnection.Output>.fromOpaque(data).takeUnretainedValue().name = String(cString: name)
        },
        description: { _, _, _ in }))

    /// wl_callback.done: sets the Bool its user data points to.
    nonisolated(unsafe) static let callback: UnsafeMutablePointer<wl_callback_listener> = make(wl_callback_listener(
        done: { data, _, _ in data?.assumingMemoryBound(to: Bool.self).pointee = true }))

    public static func make<T>(_ value: T) -> UnsafeMutablePointer<T> {
        let p = UnsafeMutablePointer<T>.allocate(capacity: 1)
        p.initialize(to: value)
        return p
    }
}
