import CPipeWire
import Glibc
import Kit
import Support

/// Reads video frames from a PipeWire node (a screen-cast stream that Mutter or KWin made for the
/// node): a consumer stream on its own PipeWire thread that keeps a copy of the latest frame.
/// Screen casts send frames on damage only, so a still screen sends one frame and then nothing:
/// the latest frame stays valid until a newer one comes.
public final class PipeWireStream: @unchecked Sendable {  // the PipeWire objects are used on its loop thread or under its lock
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public let description: String
        public init(_ d: String) { description = d }
    }

    /// The newest buffer with a picture, kept from PipeWire (not queued back) until a newer one
    /// comes, so a frame costs nothing until someone reads it: a cached cast of a busy screen
    /// copied every frame before (about 0.5 GB/s at 1080p60 while nobody looked).
    private struct Latest {
        var held: UnsafeMutablePointer<pw_buffer>?
        var pixels: UnsafeRawPointer?
        var width = 0, height = 0, stride = 0
        var order: PipeWireFrame.ByteOrder = .bgrx
        var sequence: UInt64 = 0
        var failure: String?
    }

    private static let initialized: Void = { pw_init(nil, nil) }()

    private let loop: OpaquePointer
    private var context: OpaquePointer?
    private var core: OpaquePointer?
    private var stream: OpaquePointer?
    private let hook = UnsafeMutablePointer<spa_hook>.allocate(capacity: 1)
    private let events = UnsafeMutablePointer<pw_stream_events>.allocate(capacity: 1)
    private let latest = Locked(Latest())
    private let wakeup = Wakeup()
    /// The negotiated format, set on the loop thread before any frame.
    private var format: (order: PipeWireFrame.ByteOrder, width: Int, height: Int)?
    public let nodeId: UInt32

    /// Connects to node `nodeId` through `remote`: the session's PipeWire daemon (PipeWireRemote),
    /// or a portal's OpenPipeWireRemote fd. The stream owns the connection's fd from here on.
    public init(nodeId: UInt32, remote: PipeWireRemote, name: String = "openclaw-node") throws(Failure) {
        _ = Self.initialized
        self.nodeId = nodeId
        hook.initialize(to: spa_hook())
        events.initialize(to: pw_stream_events())
        guard let l = pw_thread_loop_new("ocn-pipewire", nil) else { throw Failure("cannot start a PipeWire loop") }
        loop = l
        events.pointee.version = ocpw_stream_events_version()
        // The callbacks borrow the stream without a reference of their own: one that held the last
        // reference would run deinit on the loop's thread, inside the loop's own dispatch.
        events.pointee.state_changed = { data, _, state, error in
            guard let data else { return }
            Unmanaged<PipeWireStream>.fromOpaque(data)._withUnsafeGuaranteedRef { $0.stateChanged(state, error) }
        }
        events.pointee.param_changed = { data, id, param in
            guard let data else { return }
            Unmanaged<PipeWireStream>.fromOpaque(data)._withUnsafeGuaranteedRef { $0.paramChanged(id, param) }
        }
        events.pointee.remove_buffer = { data, buffer in
            guard let data else { return }
            Unmanaged<PipeWireStream>.fromOpaque(data)._withUnsafeGuaranteedRef { $0.removed(buffer) }
        }
        events.pointee.process = { data in
            guard let data else { return }
            Unmanaged<PipeWireStream>.fromOpaque(data)._withUnsafeGuaranteedRef { $0.process() }
        }
        // Past this point deinit runs even when init throws: it closes whatever was made.
        guard pw_thread_loop_start(loop) == 0 else { throw Failure("cannot start a PipeWire loop thread") }
        let fd: Int32
        do throws(Failure) { fd = try remote.connect() } catch { throw error }
        pw_thread_loop_lock(loop)
        let problem = connect(fd: fd, name: name)
        pw_thread_loop_unlock(loop)
        if let problem { throw Failure(problem) }
    }

    deinit { close() }

    /// Made under the loop's lock.
    private func connect(fd: Int32, name: String) -> String? {
        guard let ctx = pw_context_new(pw_thread_loop_get_loop(loop), nil, 0) else { Glibc.close(fd); return "cannot make a PipeWire context" }
        context = ctx
        core = pw_context_connect_fd(ctx, fd, nil, 0)
        guard let core else { return "cannot speak to PipeWire (\(String(cString: strerror(errno))))" }
        let props = pw_properties_new_string("media.type=Video media.category=Capture media.role=Screen")
        guard let s = pw_stream_new(core, name, props) else { return "cannot make a PipeWire stream" }
        stream = s
        ocpw_stream_listen(s, hook, events, Unmanaged.passUnretained(self).toOpaque())
        var storage = [UInt8](repeating: 0, count: 1024)
        let r = storage.withUnsafeMutableBufferPointer { buf -> Int32 in
            var params: [UnsafePointer<spa_pod>?] = [ocpw_video_formats(buf.baseAddress, UInt32(buf.count))]
            return pw_stream_connect(s, SPA_DIRECTION_INPUT, nodeId, ocpw_input_flags(), &params, 1)
        }
        return r < 0 ? "cannot connect to PipeWire node \(nodeId): \(String(cString: strerror(-r)))" : nil
    }

    /// Disconnects, lets the loop run out, then destroys. libpipewire 0.3 hands each frame to the
    /// loop thread as a queued call that carries the stream's own pointer, and does not take queued
    /// calls back when the stream is destroyed (upstream fixed that in 1.6): destroyed under the
    /// lock, a frame that came just before could run on the freed stream once the lock was let go
    /// (a crash seen once, in libpipewire on this loop's thread, while the session's PipeWire went
    /// away). Disconnected first, no new call is queued; stopping the loop runs what is queued
    /// while the stream is still alive; after that no thread runs the loop and this one may free.
    private func close() {
        assert(pw_thread_loop_in_thread(loop) == false, "a PipeWireStream must not be dropped on its own loop thread")
        pw_thread_loop_lock(loop)
        if let stream { pw_stream_disconnect(stream) }
        pw_thread_loop_unlock(loop)
        pw_thread_loop_stop(loop)
        if let stream { pw_stream_destroy(stream) }
        stream = nil
        if let core { pw_core_disconnect(core) }
        core = nil
        if let context { pw_context_destroy(context) }
        context = nil
        pw_thread_loop_destroy(loop)
        hook.deallocate()
        events.deallocate()
    }

    // MARK: the loop thread

    private func stateChanged(_ state: pw_stream_state, _ error: UnsafePointer<CChar>?) {
        guard state == PW_STREAM_STATE_ERROR || state == PW_STREAM_STATE_UNCONNECTED else { return }
        let why = error.map { String(cString: $0) } ?? (state == PW_STREAM_STATE_ERROR ? "stream error" : "the stream was disconnected")
        latest.withLock { $0.failure = "PipeWire node \(nodeId): \(why)" }
        wakeup.signal()
    }

    private func paramChanged(_ id: UInt32, _ param: UnsafePointer<spa_pod>?) {
        guard id == SPA_PARAM_Format.rawValue, let param, let stream else { return }
        var f: UInt32 = 0, w: UInt32 = 0, h: UInt32 = 0
        guard ocpw_parse_video(param, &f, &w, &h) == 0, w > 0, h > 0, w <= 16384, h <= 16384 else {
            latest.withLock { $0.failure = "PipeWire node \(nodeId) offered a video format this node cannot read" }
            wakeup.signal()
            return
        }
        let order: PipeWireFrame.ByteOrder
        switch f {
        case SPA_VIDEO_FORMAT_BGRx.rawValue, SPA_VIDEO_FORMAT_BGRA.rawValue: order = .bgrx
        case SPA_VIDEO_FORMAT_RGBx.rawValue, SPA_VIDEO_FORMAT_RGBA.rawValue: order = .rgbx
        default:
            latest.withLock { $0.failure = "PipeWire node \(nodeId) negotiated video format \(f), which this node cannot read" }
            wakeup.signal()
            return
        }
        format = (order, Int(w), Int(h))
        var storage = [UInt8](repeating: 0, count: 256)
        storage.withUnsafeMutableBufferPointer { buf in
            var params: [UnsafePointer<spa_pod>?] = [ocpw_buffer_types(buf.baseAddress, UInt32(buf.count))]
            _ = pw_stream_update_params(stream, &params, 1)
        }
    }

    /// Keeps the newest buffer that holds a picture (a cursor-only update carries none) and gives
    /// the one kept before back to PipeWire.
    private func process() {
        guard let stream else { return }
        var newest: UnsafeMutablePointer<pw_buffer>?
        while let b = pw_stream_dequeue_buffer(stream) {
            if let n = newest { pw_stream_queue_buffer(stream, n) }
            newest = b
        }
        guard let b = newest else { return }
        guard let format, let spa = b.pointee.buffer, spa.pointee.n_datas > 0, let datas = spa.pointee.datas,
              let base = datas[0].data, let chunk = datas[0].chunk?.pointee, chunk.size > 0 else {
            pw_stream_queue_buffer(stream, b)
            return
        }
        let rowBytes = format.width * 4
        let stride = chunk.stride > 0 ? Int(chunk.stride) : rowBytes
        guard stride >= rowBytes, Int(chunk.offset) + stride * (format.height - 1) + rowBytes <= Int(datas[0].maxsize) else {
            pw_stream_queue_buffer(stream, b)
            return
        }
        let previous = latest.withLock { l -> UnsafeMutablePointer<pw_buffer>? in
            let old = l.held
            l.held = b
            l.pixels = UnsafeRawPointer(base + Int(chunk.offset))
            l.width = format.width; l.height = format.height; l.stride = stride; l.order = format.order
            l.sequence &+= 1
            return old
        }
        if let previous { pw_stream_queue_buffer(stream, previous) }
        wakeup.signal()
    }

    /// A buffer PipeWire takes away (renegotiation, the end): never read from it again.
    private func removed(_ buffer: UnsafeMutablePointer<pw_buffer>?) {
        latest.withLock { l in
            if l.held == buffer { l.held = nil; l.pixels = nil }
        }
    }

    // MARK: the caller's thread

    /// Waits until a frame newer than `sequence` has come (0: any frame) and returns its number.
    public func waitForFrame(after sequence: UInt64 = 0, timeout: Duration, cancel: CancelFlag? = nil) throws(Failure) -> UInt64 {
        let deadline = ContinuousClock.now + timeout
        while true {
            let (seq, failure) = latest.withLock { ($0.sequence, $0.failure) }
            if let failure { throw Failure(failure) }
            if seq > sequence { return seq }
            if let cancel, cancel.isCancelled { throw Failure("cancelled") }
            let left = deadline - ContinuousClock.now
            if left <= .zero { throw Failure("no frame from PipeWire node \(nodeId) within \(timeout)") }
            var pfd = pollfd(fd: wakeup.fd, events: Int16(POLLIN), revents: 0)
            let ms = Int32(min(100, max(1, left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000)))
            if poll(&pfd, 1, ms) > 0 { wakeup.drain() }
        }
    }

    /// The latest frame and its number, lent to `body` (it must not keep the view); nil before the first.
    public func withLatestFrame<T, E: Error>(_ body: (PipeWireFrame) throws(E) -> T) throws(E) -> T? {
        try latest.withLock { (l: inout Latest) throws(E) -> T? in
            guard let p = l.pixels, l.held != nil, l.sequence > 0 else { return nil }
            return try body(PipeWireFrame(base: p, width: l.width, height: l.height, bytesPerRow: l.stride,
                                          order: l.order, sequence: l.sequence))
        }
    }

    /// Readable after a frame (or a failure) came: for a caller that polls it beside its own fds.
    /// Only one waiter may use it (waitForFrame drains it too).
    public var frameReadyFD: Int32 { wakeup.fd }
    public func drainFrameReady() { wakeup.drain() }

    /// Why the stream stopped delivering, once it has.
    public var failure: String? { latest.withLock { $0.failure } }

    /// The number of the latest frame (0 before the first); it grows with each frame that comes.
    public var latestSequence: UInt64 { latest.withLock { $0.sequence } }

    /// The size of the frames, once negotiated.
    public var size: (width: Int, height: Int)? { latest.withLock { $0.sequence > 0 ? ($0.width, $0.height) : nil } }
}

/// One frame lent by PipeWireStream: 32-bit pixels, top row first. (Not Media's PixelView: this
/// library must not link its own copy of Media, whose types the bundles share.)
public struct PipeWireFrame {
    public enum ByteOrder: Sendable { case bgrx, rgbx }
    public let base: UnsafeRawPointer
    public let width: Int, height: Int, bytesPerRow: Int
    public let order: ByteOrder
    /// Counts the frames the stream delivered (not the ones the caller read).
    public let sequence: UInt64

    public init(base: UnsafeRawPointer, width: Int, height: Int, bytesPerRow: Int, order: ByteOrder, sequence: UInt64) {
        self.base = base; self.width = width; self.height = height; self.bytesPerRow = bytesPerRow; self.order = order; self.sequence = sequence
    }
}
