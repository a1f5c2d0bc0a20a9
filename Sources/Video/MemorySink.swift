import CFFmpeg
import Glibc
import Media

/// A growable in-memory file for FFmpeg's muxer. The MP4 muxer writes forward and then seeks back
/// to patch sizes and append the index, so this is a real seekable file, not a pipe.
final class MemorySink {
    /// The file so far; `finish` hands it out without copying.
    private(set) var bytes: [UInt8] = []
    private var position = 0
    /// Owned AVIOContext (and its buffer) pointing back at this object; freed in deinit.
    private(set) var context: UnsafeMutablePointer<AVIOContext>!
    /// The recorder's libraries (a copy keeps them open until this sink is gone).
    private let ff: FFmpegLibraries

    static let bufferSize = 64 * 1024

    init(_ ff: FFmpegLibraries) throws(MediaError) {
        self.ff = ff
        guard let buffer = ff.av_malloc(MemorySink.bufferSize) else { throw MediaError(.codec, "out of memory") }
        let me = Unmanaged.passUnretained(self).toOpaque()
        // Through the shim: the write callback's type differs between FFmpeg 5.1 and 7.
        guard let ctx = cff_avio_alloc_write_context(ff.avio_alloc_context, buffer.assumingMemoryBound(to: UInt8.self), Int32(MemorySink.bufferSize), me,
                                                     memorySinkWrite, memorySinkSeek) else {
            ff.av_free(buffer)
            throw MediaError(.codec, "avio_alloc_context failed")
        }
        context = ctx
    }

    deinit {
        guard let ctx = context else { return }  // init failed before the context existed
        // The context may have replaced its buffer; free whichever it holds now.
        ff.av_free(ctx.pointee.buffer)
        var owned: UnsafeMutablePointer<AVIOContext>? = ctx
        ff.avio_context_free(&owned)
    }

    var count: Int { bytes.count }

    fileprivate func write(_ data: UnsafePointer<UInt8>, _ n: Int) {
        let chunk = UnsafeBufferPointer(start: data, count: n)
        if position > bytes.count { bytes.append(contentsOf: repeatElement(0, count: position - bytes.count)) }  // a hole: zeros, like a file
        if position == bytes.count {
            bytes.append(contentsOf: chunk)
        } else {
            // A patch after seeking back (box sizes, the index); may also run past the end.
            bytes.replaceSubrange(position..<min(position + n, bytes.count), with: chunk)
        }
        position += n
    }

    fileprivate func seek(_ offset: Int64, _ whence: Int32) -> Int64 {
        if whence & cff_avseek_size() != 0 { return Int64(bytes.count) }
        let target: Int64
        switch whence & ~Int32(AVSEEK_FORCE) {
        case SEEK_SET: target = offset
        case SEEK_CUR: target = Int64(position) + offset
        case SEEK_END: target = Int64(bytes.count) + offset
        default: return -1
        }
        guard target >= 0 else { return -1 }
        position = Int(target)
        return target
    }
}

private func memorySinkWrite(_ opaque: UnsafeMutableRawPointer?, _ buf: UnsafePointer<UInt8>?, _ size: Int32) -> Int32 {
    guard let opaque, let buf, size >= 0 else { return cff_averror_enomem() }
    Unmanaged<MemorySink>.fromOpaque(opaque).takeUnretainedValue().write(buf, Int(size))
    return size
}

private func memorySinkSeek(_ opaque: UnsafeMutableRawPointer?, _ offset: Int64, _ whence: Int32) -> Int64 {
    guard let opaque else { return -1 }
    return Unmanaged<MemorySink>.fromOpaque(opaque).takeUnretainedValue().seek(offset, whence)
}
