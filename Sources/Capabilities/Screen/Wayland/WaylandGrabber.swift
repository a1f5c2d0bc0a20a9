import CWaylandClient
import CWaylandProtocols
import Glibc
import Kit
import Media
import Support
import WaylandSupport

/// Captures one Wayland output through wlr-screencopy into a shared-memory buffer (memfd), which is
/// kept between grabs while the frame size and format stay the same.
final class WaylandGrabber: ScreenGrabber {
    let connection: WaylandConnection
    private let output: WaylandConnection.Output
    private var buffer: ShmBuffer?

    init(connection: WaylandConnection, screenIndex: Int) throws(NodeError) {
        self.connection = connection
        guard connection.screencopy != nil, connection.shm != nil else { throw WaylandScreen.noScreencopy(connection) }
        let outputs = connection.orderedOutputs
        guard outputs.indices.contains(screenIndex) else {
            throw NodeError.invalidRequest("screenIndex \(screenIndex) does not exist: the compositor has \(outputs.count) output(s) " +
                                           "(\(outputs.map(\.name).joined(separator: ", ")))")
        }
        output = outputs[screenIndex]
    }

    var width: Int { output.width }
    var height: Int { output.height }
    var method: String { "wlr-screencopy" }

    func grab<T>(includePointer: Bool, _ body: (PixelView) throws(NodeError) -> T) throws(NodeError) -> T {
        guard !output.removed else { throw ScreenError.unavailable("output \(output.name) was removed from the compositor") }
        guard let manager = connection.screencopy, let frame = zwlr_screencopy_manager_v1_capture_output(manager, includePointer ? 1 : 0, output.proxy) else {
            throw connection.lost()
        }
        let state = FrameState()
        defer { zwlr_screencopy_frame_v1_destroy(frame) }
        zwlr_screencopy_frame_v1_add_listener(frame, FrameState.listener, Unmanaged.passUnretained(state).toOpaque())
        // Version 3 lists every buffer type, then buffer_done; older ones send only the shm one.
        let v3 = connection.screencopyVersion >= 3
        try connection.wait(until: { state.failed || (state.shm != nil && (!v3 || state.bufferDone)) }, timeout: .seconds(5), what: "frame buffer")
        guard !state.failed, let info = state.shm else { throw ScreenError.unavailable("the compositor refused to capture output \(output.name)") }
        guard let layout = Self.layout(info.format) else {
            throw ScreenError.unavailable("the compositor offers output \(output.name) only in shm format 0x\(info.format.hex()), which this node cannot read")
        }
        // The compositor's numbers size a memfd and index its pixels: checked before either.
        guard info.isSane else {
            throw ScreenError.unavailable("the compositor described output \(output.name)'s frame as \(info.width)x\(info.height), stride \(info.stride); not capturing that")
        }
        if buffer.map({ !$0.fits(info) }) ?? true {
            buffer = nil
            buffer = try ShmBuffer(connection: connection, info: info)
        }
        guard let buffer else { throw connection.lost() }
        zwlr_screencopy_frame_v1_copy(frame, buffer.wlBuffer)
        try connection.wait(until: { state.failed || state.ready || output.removed }, timeout: .seconds(5), what: "frame copy")
        guard state.ready else { throw ScreenError.unavailable("the compositor could not copy output \(output.name) (it may have gone away)") }
        let view = PixelView(base: UnsafeRawPointer(buffer.memory), width: Int(info.width), height: Int(info.height),
                             bytesPerRow: Int(info.stride), layout: layout)
        if state.flags & 1 == 0 { return try body(view) }
        // y_invert: the rows arrive bottom-up; hand out a top-down copy.
        return try buffer.flipped(view, body)
    }

    func isStillValid(screenIndex: Int) -> Bool { connection.stillShows(output, at: screenIndex) }

    /// No round trip of its own: the connection has just made one (opened, or checked by the cache)
    /// before a capture, and after it the frame's events came in order with any output change.
    func liveIdentity(screenIndex: Int) -> String? { connection.identityFromEvents(ofOutputAt: screenIndex) }

    /// wl_shm formats are little-endian words: XRGB8888 is B, G, R, X in memory.
    static func layout(_ format: UInt32) -> PixelLayout? {
        switch format {
        case WL_SHM_FORMAT_ARGB8888.rawValue, WL_SHM_FORMAT_XRGB8888.rawValue: return .bgrx
        case WL_SHM_FORMAT_ABGR8888.rawValue, WL_SHM_FORMAT_XBGR8888.rawValue: return .rgbx
        default: return nil
        }
    }
}

/// What the compositor said about one frame.
final class FrameState {
    struct Shm: Equatable {
        let format: UInt32; let width: UInt32; let height: UInt32; let stride: UInt32
        /// A frame this node can map and read: 1…16384 pixels each way, 4 bytes a pixel at least,
        /// and under 2 GiB in all (wl_shm sizes are Int32).
        var isSane: Bool {
            (1...16384).contains(width) && (1...16384).contains(height) && stride >= width * 4
                && UInt64(stride) * UInt64(height) < UInt64(Int32.max)
        }
    }
    var shm: Shm?
    var bufferDone = false
    var flags: UInt32 = 0
    var ready = false
    var failed = false

    private static func state(_ data: UnsafeMutableRawPointer?) -> FrameState? {
        data.map { Unmanaged<FrameState>.fromOpaque($0).takeUnretainedValue() }
    }

    nonisolated(unsafe) static let listener: UnsafeMutablePointer<zwlr_screencopy_frame_v1_listener> = WaylandListeners.make(
        zwlr_screencopy_frame_v1_listener(
            buffer: { data, _, format, width, height, stride in
                state(data)?.shm = Shm(format: format, width: width, height: height, stride: stride)
            },
            flags: { data, _, flags in state(data)?.flags = flags },
            ready: { data, _, _, _, _ in state(data)?.ready = true },
            failed: { data, _ in state(data)?.failed = true },
            damage: { _, _, _, _, _, _ in },
            linux_dmabuf: { _, _, _, _, _ in },
            buffer_done: { data, _ in state(data)?.bufferDone = true }))
}

/// A wl_buffer over anonymous shared memory (memfd) the compositor copies a frame into.
final class ShmBuffer {
    /// Held so the display outlives the buffer's proxies (destroying a proxy needs the connection).
    private let connection: WaylandConnection
    let info: FrameState.Shm
    let memory: UnsafeMutableRawPointer
    let wlBuffer: OpaquePointer
    private let size: Int
    /// The memfd and its mapping (the pool keeps its own reference to the file).
    private let file: SharedMemoryFile
    private let pool: OpaquePointer
    private var flipSpace: UnsafeMutableRawPointer?

    init(connection: WaylandConnection, info: FrameState.Shm) throws(NodeError) {
        self.connection = connection
        self.info = info
        size = Int(info.stride) * Int(info.height)
        guard let file = SharedMemoryFile(name: "openclaw-node-wl-shm"), file.reserve(size), let m = file.base else {
            throw ScreenError.unavailable("cannot allocate \(size) bytes of shared memory for the frame: \(String(cString: strerror(errno)))")
        }
        guard let shm = connection.shm, let p = wl_shm_create_pool(shm, file.fd, Int32(size)),
              let b = wl_shm_pool_create_buffer(p, 0, Int32(info.width), Int32(info.height), Int32(info.stride), info.format) else {
            throw connection.lost()
        }
        self.file = file
        memory = m
        pool = p
        wlBuffer = b
    }

    deinit {
        wl_buffer_destroy(wlBuffer)
        wl_shm_pool_destroy(pool)
        flipSpace?.deallocate()
    }

    func fits(_ other: FrameState.Shm) -> Bool { info == other }

    /// The frame with its rows in top-down order, in memory of its own.
    func flipped<T>(_ view: PixelView, _ body: (PixelView) throws(NodeError) -> T) throws(NodeError) -> T {
        let space = flipSpace ?? UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
        flipSpace = space
        let row = view.bytesPerRow
        for y in 0..<view.height {
            (space + y * row).copyMemory(from: view.base + (view.height - 1 - y) * row, byteCount: row)
        }
        return try body(PixelView(base: UnsafeRawPointer(space), width: view.width, height: view.height, bytesPerRow: row, layout: view.layout))
    }
}

/// What the Wayland backend says when it cannot capture.
enum WaylandScreen {
    static func noScreencopy(_ c: WaylandConnection) -> NodeError {
        let desktop = ProcessEnvironment.current["XDG_CURRENT_DESKTOP"].map { " (\($0))" } ?? ""
        return ScreenError.unavailable("the Wayland compositor at \(c.socket)\(desktop) offers no wlr-screencopy, so its screen cannot be " +
            "captured through it: wlroots compositors (sway, wayfire, labwc — Raspberry Pi OS's desktop) have it; GNOME is captured " +
            "through Mutter's screen cast instead (backend \"gnome\", over the session bus), KDE Plasma through KWin's ScreenShot2 " +
            "(backend \"kde\"), any desktop with xdg-desktop-portal through its screen cast (backend \"portal\", asks once); " +
            "each needs the session bus (DBUS_SESSION_BUS_ADDRESS, or the user bus in XDG_RUNTIME_DIR)")
    }
}
