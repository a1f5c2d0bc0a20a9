import CV4L2
import Config
import Glibc
import Kit
import Media
import Support

/// An mmap-streaming capture session on one device: S_FMT, REQBUFS, QUERYBUF + mmap, QBUF,
/// STREAMON. Owns the mapped buffers; deinit does STREAMOFF, munmap and REQBUFS(0) so the device
/// is free for other applications as soon as the stream is released.
final class V4L2Stream {
    let device: V4L2Device
    let format: CameraPixelFormat
    let width: Int
    let height: Int
    let bytesPerRow: Int
    private var buffers: [UnsafeMutableRawBufferPointer] = []
    private var streaming = false
    /// When STREAMON succeeded, and how many frames were taken from the driver since: what a
    /// `Warmup` is measured against.
    private(set) var startedAt = ContinuousClock.now
    private(set) var dequeued = 0
    /// Raised by the caller's CancelFlag (`CancelFlag.wakes`), so the wait for a frame ends at once.
    private let wakeup = Wakeup()

    static let bufferCount: UInt32 = 4

    init(device: V4L2Device, format: CameraPixelFormat, size: FrameSize) throws(NodeError) {
        self.device = device
        self.format = format
        var f = v4l2_format()
        f.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        f.fmt.pix.width = UInt32(size.width)
        f.fmt.pix.height = UInt32(size.height)
        f.fmt.pix.pixelformat = format.fourcc
        f.fmt.pix.field = V4L2_FIELD_NONE.rawValue
        guard cv4l2_s_fmt(device.fd, &f) == 0 else { throw CameraError.errno(errno, device.path, "VIDIOC_S_FMT") }
        // Drivers adjust instead of failing; take what we got, but only in a format we read.
        guard f.fmt.pix.pixelformat == format.fourcc else {
            throw CameraError.unavailable("\(device.path) did not accept \(format.rawValue) \(size)")
        }
        width = Int(f.fmt.pix.width)
        height = Int(f.fmt.pix.height)
        bytesPerRow = max(Int(f.fmt.pix.bytesperline), width * (format.rawLayout?.bytesPerPixel ?? 0))
        try mapBuffers()
        guard cv4l2_streamon(device.fd) == 0 else { throw CameraError.errno(errno, device.path, "VIDIOC_STREAMON") }
        streaming = true
        startedAt = .now
    }

    deinit {
        if streaming { _ = cv4l2_streamoff(device.fd) }
        for b in buffers { munmap(b.baseAddress, b.count) }
        var r = v4l2_requestbuffers()
        r.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        r.memory = V4L2_MEMORY_MMAP.rawValue
        r.count = 0
        _ = cv4l2_reqbufs(device.fd, &r)
    }

    private func mapBuffers() throws(NodeError) {
        var r = v4l2_requestbuffers()
        r.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        r.memory = V4L2_MEMORY_MMAP.rawValue
        r.count = Self.bufferCount
        guard cv4l2_reqbufs(device.fd, &r) == 0 else { throw CameraError.errno(errno, device.path, "VIDIOC_REQBUFS") }
        guard r.count > 0 else { throw CameraError.unavailable("\(device.path) gave no capture buffers") }
        for index in 0..<r.count {
            var b = Self.buffer(index)
            guard cv4l2_querybuf(device.fd, &b) == 0 else { throw CameraError.errno(errno, device.path, "VIDIOC_QUERYBUF") }
            let length = Int(b.length)
            let p = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_SHARED, device.fd, off_t(b.m.offset))
            guard let p, p != MAP_FAILED else { throw CameraError.errno(errno, device.path, "mmap") }
            buffers.append(UnsafeMutableRawBufferPointer(start: p, count: length))
            guard cv4l2_qbuf(device.fd, &b) == 0 else { throw CameraError.errno(errno, device.path, "VIDIOC_QBUF") }
        }
    }

    private static func buffer(_ index: UInt32) -> v4l2_buffer {
        var b = v4l2_buffer()
        b.index = index
        b.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        b.memory = V4L2_MEMORY_MMAP.rawValue
        return b
    }

    /// Hands the next intact frame to `body` (valid only inside it) and gives the buffer back to
    /// the driver afterwards. Waits at most `timeoutMs` on the device fd, and ends when `cancel` is
    /// raised. A buffer the driver flags as damaged (V4L2_BUF_FLAG_ERROR — UVC cameras send some
    /// right after STREAMON, which a warm-up used to swallow) or delivers empty is given back unseen,
    /// though counted in `dequeued`, and the wait goes on.
    func withFrame<T>(timeoutMs: Int = 3000, cancel: CancelFlag,
                      _ body: (UnsafeRawBufferPointer) throws(NodeError) -> T) throws(NodeError) -> T {
        let deadline = ContinuousClock.now + .milliseconds(timeoutMs)
        cancel.wakes(wakeup)
        while true {
            try cancel.check()
            var b = Self.buffer(0)
            if cv4l2_dqbuf(device.fd, &b) == 0 {
                defer { _ = cv4l2_qbuf(device.fd, &b); dequeued += 1 }
                guard Int(b.index) < buffers.count else { throw CameraError.unavailable("driver returned an unknown buffer") }
                let used = min(Int(b.bytesused), buffers[Int(b.index)].count)
                if b.flags & UInt32(V4L2_BUF_FLAG_ERROR) == 0 && used > 0 {
                    return try body(UnsafeRawBufferPointer(rebasing: buffers[Int(b.index)][0..<used]))
                }
                guard ContinuousClock.now < deadline else {
                    throw CameraError.unavailable("\(device.path) delivered no intact frame within \(timeoutMs) ms")
                }
                continue
            }
            let e = errno
            guard e == EAGAIN || e == EINTR else { throw CameraError.errno(e, device.path, "VIDIOC_DQBUF") }
            let left = deadline - .now
            guard left > .zero else {
                throw CameraError.unavailable("\(device.path) delivered no frame within \(timeoutMs) ms")
            }
            // Woken by a raised flag (checked at the top) or a stale signal from an earlier
            // snap's flag on this warm stream (drained, and the wait goes on).
            if wakeup.wait(for: device.fd, timeout: left) == .woken { wakeup.drain() }
        }
    }

    /// Drops the frames already waiting in the driver's queue, so the next one is fresh (a warm
    /// stream keeps filling its buffers while idle).
    func dropQueued() {
        for _ in 0..<Int(Self.bufferCount) {
            var b = Self.buffer(0)
            guard cv4l2_dqbuf(device.fd, &b) == 0 else { return }
            _ = cv4l2_qbuf(device.fd, &b)
            dequeued += 1
        }
    }

    /// The first intact frame `warmup` accepts, handed to `body`; earlier ones are thrown away.
    /// The frame that ends the warm-up is the one used, not the one after it. Frames and time are
    /// counted from STREAMON, so those a snap's delayMs already let pass count too.
    func withSettledFrame<T>(_ warmup: Warmup, cancel: CancelFlag,
                             _ body: (UnsafeRawBufferPointer) throws(NodeError) -> T) throws(NodeError) -> T {
        while true {
            let result = try withFrame(cancel: cancel) { (frame: UnsafeRawBufferPointer) throws(NodeError) -> T? in
                guard warmup.accepts(framesBefore: dequeued, elapsed: .now - startedAt) else { return nil }
                return try body(frame)
            }
            if let result { return result }
        }
    }

    /// Throws frames away until `warmup` would accept the next one (none for `Warmup.none`).
    func settle(_ warmup: Warmup, cancel: CancelFlag) throws(NodeError) {
        while !warmup.accepts(framesBefore: dequeued, elapsed: .now - startedAt) {
            try withFrame(cancel: cancel) { (_: UnsafeRawBufferPointer) throws(NodeError) in }
        }
    }
}

extension V4L2Stream {
    /// The raw (YUYV/NV12) frame in `frame` as an image view, after checking the driver filled
    /// the whole image: a short buffer would make the converter read past the mapping.
    func rawView(_ frame: UnsafeRawBufferPointer, base: UnsafeRawPointer) throws(MediaError) -> PixelView {
        guard let layout = format.rawLayout else { throw MediaError(.unsupported, "\(format.rawValue) frames are compressed") }
        let needed = layout.imageBytes(bytesPerRow: bytesPerRow, width: width, height: height)
        guard frame.count >= needed else {
            throw MediaError(.codec, "short \(format.rawValue) frame (\(frame.count) of \(needed) bytes)")
        }
        return PixelView(base: base, width: width, height: height, bytesPerRow: bytesPerRow, layout: layout)
    }
}
