import DesktopSession
import Glibc
import Kit
import Support

/// What the node's own RFB server shows and drives (a desktop with no VNC server of its own:
/// GNOME, where frames come from a screen cast and input goes to a RemoteDesktop session).
protocol RFBDesktop: AnyObject {
    /// The server's name in ServerInit.
    var name: String { get }
    /// Readable when a new frame may be there (poll it beside the viewer's socket).
    var frameReadyFD: Int32 { get }
    func drainFrameReady()
    /// The latest frame, lent to `body`; nil before the first.
    func withFrame<T>(_ body: (PipeWireFrame) -> T) -> T?
    func pointer(x: Int, y: Int) throws(NodeError)
    /// A Linux button code (BTN_LEFT 0x110 …).
    func button(_ code: Int32, down: Bool) throws(NodeError)
    func scroll(axis: UInt32, steps: Int32) throws(NodeError)
    func key(_ keysym: UInt32, down: Bool) throws(NodeError)
}

/// One viewer of the node's own RFB server (RFC 6143, version 3.8, 3.7 or 3.3), on a connected
/// stream socket that only the node holds the other end of: security "None" (the node itself
/// runs the VNC password check toward the gateway, as with wayvnc), Raw encoding in the viewer's
/// pixel format, and updates of only the part of the screen that changed since the last one sent.
/// Runs on its own thread until the viewer leaves, an error, or `stop`.
final class RFBServerSession {
    private let fd: Int32
    private let desktop: any RFBDesktop
    private let stop: CancelFlag
    private let log: Logger
    private var format = RFBPixelFormat.serverDefault
    /// The viewer's FramebufferUpdateRequest not answered yet (incremental ones wait for a change).
    private var pending: (incremental: Bool, x: Int, y: Int, w: Int, h: Int)?
    /// What the viewer has: a copy of the last frame sent.
    private var shown: [UInt8] = []
    private var width = 0, height = 0
    private var buttons: UInt8 = 0
    private var pointerAt: (Int, Int)?

    init(fd: Int32, desktop: any RFBDesktop, stop: CancelFlag, log: Logger) {
        self.fd = fd; self.desktop = desktop; self.stop = stop; self.log = log
    }

    struct Ended: Error { let why: String }

    /// Serves until the viewer leaves (returns normally) or something fails (the reason).
    func run() -> String? {
        do throws(Ended) {
            try handshake()
            while !stop.isCancelled {
                var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: desktop.frameReadyFD, events: Int16(POLLIN), revents: 0)]
                _ = poll(&fds, 2, 200)
                if fds[1].revents != 0 { desktop.drainFrameReady() }
                if fds[0].revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 {
                    guard try message() else { return nil }
                }
                try answer()
            }
            return nil
        } catch {
            return error.why
        }
    }

    // MARK: reading and writing

    private func read(_ n: Int) throws(Ended) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: n)
        var have = 0
        let deadline = ContinuousClock.now + .seconds(30)
        while have < n {
            let r = out.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + have, n - have) }
            if r > 0 { have += r; continue }
            if r == 0 { throw Ended(why: "the viewer left") }
            if errno == EINTR { continue }
            if errno == EAGAIN {
                guard !stop.isCancelled, ContinuousClock.now < deadline else { throw Ended(why: "the viewer stopped mid-message") }
                var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                _ = poll(&p, 1, 100)
                continue
            }
            throw Ended(why: "reading from the viewer: \(String(cString: strerror(errno)))")
        }
        return out
    }

    private func write(_ bytes: [UInt8]) throws(Ended) {
        do throws(Errno) { try SystemIO.live.writeAll(fd, bytes) } catch { throw Ended(why: "writing to the viewer: \(error)") }
    }

    private static func u16(_ b: [UInt8], _ i: Int) -> Int { Int(b[i]) << 8 | Int(b[i + 1]) }
    private static func u32(_ b: [UInt8], _ i: Int) -> UInt32 { b[i..<(i + 4)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) } }
    private static func be16(_ v: Int) -> [UInt8] { [UInt8(truncatingIfNeeded: v >> 8), UInt8(truncatingIfNeeded: v)] }
    private static func be32(_ v: UInt32) -> [UInt8] { [24, 16, 8, 0].map { (shift: UInt32) -> UInt8 in UInt8(truncatingIfNeeded: v >> shift) } }

    // MARK: the protocol

    private func handshake() throws(Ended) {
        // The screen's size is what ServerInit announces: wait for the first frame.
        let deadline = ContinuousClock.now + .seconds(5)
        while desktop.withFrame({ _ in true }) == nil {
            guard ContinuousClock.now < deadline, !stop.isCancelled else { throw Ended(why: "the desktop sent no picture within 5 s") }
            var p = pollfd(fd: desktop.frameReadyFD, events: Int16(POLLIN), revents: 0)
            _ = poll(&p, 1, 100)
            desktop.drainFrameReady()
        }
        desktop.withFrame { f in width = f.width; height = f.height }
        try write(Array("RFB 003.008\n".utf8))
        let version = String(decoding: try read(12), as: UTF8.self)
        guard version.hasPrefix("RFB 003.") else { throw Ended(why: "the viewer does not speak RFB (\(version.prefix(11)))") }
        let minor = Int(version.dropFirst(8).prefix(3)) ?? 3
        if minor < 7 {
            try write(Self.be32(1))  // 3.3: the server decides: None
        } else {
            try write([1, 1])  // one type: None
            guard try read(1) == [1] else { throw Ended(why: "the viewer chose a security type that was not offered") }
            if minor >= 8 { try write(Self.be32(0)) }
        }
        _ = try read(1)  // ClientInit: shared or not (there is one viewer)
        let name = Array(desktop.name.utf8)
        var serverInit: [UInt8] = Self.be16(width)
        serverInit += Self.be16(height)
        serverInit += format.encoded
        serverInit += Self.be32(UInt32(name.count))
        serverInit += name
        try write(serverInit)
    }

    /// Handles one message from the viewer; false when it left.
    private func message() throws(Ended) -> Bool {
        var first = [UInt8](repeating: 0, count: 1)
        let r = Glibc.read(fd, &first, 1)
        if r == 0 { return false }
        if r < 0 { return errno == EAGAIN || errno == EINTR ? true : false }
        switch first[0] {
        case 0:  // SetPixelFormat
            let b = try read(19)
            guard let f = RFBPixelFormat.parse(Array(b[3...])) else {
                throw Ended(why: "the viewer asked for a pixel format this server does not write (colour map or \(b[3]) bits per pixel)")
            }
            format = f
            shown = []  // the next update is whole, in the new format
        case 2:  // SetEncodings: Raw is always understood
            let b = try read(3)
            _ = try read(Self.u16(b, 1) * 4)
        case 3:  // FramebufferUpdateRequest
            let b = try read(9)
            let x = min(Self.u16(b, 1), width), y = min(Self.u16(b, 3), height)
            let w = min(Self.u16(b, 5), width - x), h = min(Self.u16(b, 7), height - y)
            let incremental = b[0] != 0
            if let p = pending {
                let x0 = min(p.x, x), y0 = min(p.y, y)
                pending = (p.incremental && incremental, x0, y0, max(p.x + p.w, x + w) - x0, max(p.y + p.h, y + h) - y0)
            } else {
                pending = (incremental, x, y, w, h)
            }
        case 4:  // KeyEvent
            let b = try read(7)
            do throws(NodeError) { try desktop.key(Self.u32(b, 3), down: b[0] != 0) } catch { log.info("desktop stream: a key did not reach the desktop: \(error.message)") }
        case 5:  // PointerEvent
            let b = try read(5)
            pointerEvent(mask: b[0], x: min(Self.u16(b, 1), max(0, width - 1)), y: min(Self.u16(b, 3), max(0, height - 1)))
        case 6:  // ClientCutText: read and left (the desktop's clipboard is not the viewer's)
            let b = try read(7)
            let n = Int(Self.u32(b, 3))
            guard n <= 1 << 20 else { throw Ended(why: "the viewer sent \(n) bytes of clipboard text") }
            _ = try read(n)
        default:
            throw Ended(why: "the viewer sent message type \(first[0]), which this server does not know")
        }
        return true
    }

    private func pointerEvent(mask: UInt8, x: Int, y: Int) {
        do throws(NodeError) {
            if pointerAt.map({ $0 != (x, y) }) ?? true {
                try desktop.pointer(x: x, y: y)
                pointerAt = (x, y)
            }
            // Bits 0–2: left, middle, right; 3–6: wheel up, down, left, right (a press is a notch).
            for (bit, code) in [(0, Int32(0x110)), (1, Int32(0x112)), (2, Int32(0x111))] where (mask ^ buttons) & (1 << bit) != 0 {
                try desktop.button(code, down: mask & (1 << bit) != 0)
            }
            for (bit, axis, steps) in [(3, UInt32(0), Int32(-1)), (4, 0, 1), (5, 1, -1), (6, 1, 1)] where mask & (1 << bit) != 0 && buttons & (1 << bit) == 0 {
                try desktop.scroll(axis: axis, steps: steps)
            }
        } catch {
            log.info("desktop stream: pointer input did not reach the desktop: \(error.message)")
        }
        buttons = mask
    }

    /// Sends the pending update once there is something to send: at once for a full request, on
    /// the next change for an incremental one.
    private func answer() throws(Ended) {
        guard let req = pending, req.w > 0, req.h > 0 else { return }
        var update: [UInt8]?
        var resized = false
        desktop.withFrame { f in
            guard f.width == width, f.height == height else { resized = true; return }
            let bytes = f.width * f.height * 4
            let full = !req.incremental || shown.count != bytes
            var rect = (x: req.x, y: req.y, w: req.w, h: req.h)
            if !full {
                guard let dirty = Self.changed(f, against: shown, within: rect) else { return }
                rect = dirty
            }
            // FramebufferUpdate: type 0, padding, one rectangle; its x, y, w, h and encoding 0 (Raw).
            var out: [UInt8] = [0, 0]
            out += Self.be16(1)
            for v in [rect.x, rect.y, rect.w, rect.h] { out += Self.be16(v) }
            out += Self.be32(0)
            format.append(rows: f.base, bytesPerRow: f.bytesPerRow, x: rect.x, y: rect.y, width: rect.w, height: rect.h,
                          rgbOrder: f.order == .rgbx, to: &out)
            update = out
            if shown.count != bytes { shown = [UInt8](repeating: 0, count: bytes) }
            shown.withUnsafeMutableBytes { dst in
                for row in 0..<f.height { memcpy(dst.baseAddress! + row * f.width * 4, f.base + row * f.bytesPerRow, f.width * 4) }
            }
        }
        if resized { throw Ended(why: "the screen changed size (\(width)x\(height)); the viewer reconnects to see the new one") }
        guard let update else { return }
        pending = nil
        try write(update)
    }

    /// The smallest rectangle inside `r` where `f` differs from `shown`, or nil.
    static func changed(_ f: PipeWireFrame, against shown: [UInt8], within r: (x: Int, y: Int, w: Int, h: Int)) -> (x: Int, y: Int, w: Int, h: Int)? {
        shown.withUnsafeBytes { old -> (x: Int, y: Int, w: Int, h: Int)? in
            var top = -1, bottom = -1, left = r.x + r.w, right = r.x - 1
            for y in r.y..<(r.y + r.h) {
                let a = f.base + y * f.bytesPerRow + r.x * 4, b = old.baseAddress! + (y * f.width + r.x) * 4
                guard memcmp(a, b, r.w * 4) != 0 else { continue }
                if top < 0 { top = y }
                bottom = y
                let pa = a.assumingMemoryBound(to: UInt32.self), pb = b.assumingMemoryBound(to: UInt32.self)
                var i = 0
                while i < r.w && pa[i] == pb[i] { i += 1 }
                var j = r.w - 1
                while j > i && pa[j] == pb[j] { j -= 1 }
                left = min(left, r.x + i); right = max(right, r.x + j)
            }
            return top < 0 ? nil : (left, top, right - left + 1, bottom - top + 1)
        }
    }
}
