import CFFmpeg
import Support

/// Converts and resizes packed images with libswscale. One instance keeps one cached context
/// (reused while the geometry stays the same), so a capture loop pays the set-up cost once.
public final class ImageScaler {
    public enum Filter: Sendable {
        /// Area averaging: the best downscale for text and UI (snapshots).
        case area
        /// Cheaper bilinear, for video frames.
        case bilinear

        var swsFlags: Int32 {
            switch self {
            case .area: return SWS_AREA
            case .bilinear: return SWS_BILINEAR
            }
        }
    }

    private let filter: Filter
    /// Owned; freed in deinit. sws_getCachedContext frees and replaces it when the geometry changes.
    private var context: OpaquePointer?
    /// Taken on first use (libswscale is opened then) and held for this scaler's life, so the
    /// library is not closed under its context.
    private var sws: IdleReleased<SwscaleLibrary, DynamicLibrary.Failure>.Lease?

    public init(filter: Filter = .area) { self.filter = filter }

    deinit { if let context { sws?.resource.freeContext(context) } }

    /// A new buffer holding `source` at width×height in `layout`.
    public func convert(_ source: PixelView, width: Int, height: Int, layout: PixelLayout) throws(MediaError) -> PixelBuffer {
        let out = PixelBuffer(width: width, height: height, layout: layout)
        let (sws, ctx) = try prepare(source, width: width, height: height, format: layout.avPixelFormat)
        let rows = cff_scale_packed(sws.scale, ctx, source.base.assumingMemoryBound(to: UInt8.self), source.chromaPlane,
                                    Int32(source.bytesPerRow), Int32(source.height),
                                    out.mutableBase.assumingMemoryBound(to: UInt8.self),
                                    Int32(out.bytesPerRow))
        guard rows == Int32(height) else { throw MediaError(.codec, "sws_scale wrote \(rows) of \(height) rows") }
        return out
    }

    /// Converts `source` into an allocated AVFrame (planar YUV for the video encoder).
    /// A same-size 32-bit RGB screen frame into YUV 4:2:0 skips libswscale (YUV420Converter);
    /// `direct: false` (tests) always takes libswscale.
    public func convert(_ source: PixelView, into frame: UnsafeMutablePointer<AVFrame>) throws(MediaError) {
        try convert(source, into: frame, direct: true)
    }

    func convert(_ source: PixelView, into frame: UnsafeMutablePointer<AVFrame>, direct: Bool) throws(MediaError) {
        let f = frame.pointee
        if direct, f.format == AV_PIX_FMT_YUV420P.rawValue, YUV420Converter.handles(source, width: Int(f.width), height: Int(f.height)),
           let y = f.data.0, let u = f.data.1, let v = f.data.2 {
            YUV420Converter.convert(source, y: y, yStride: Int(f.linesize.0), u: u, uStride: Int(f.linesize.1),
                                    v: v, vStride: Int(f.linesize.2))
            return
        }
        let (sws, ctx) = try prepare(source, width: Int(f.width), height: Int(f.height), format: AVPixelFormat(rawValue: f.format))
        let rows = cff_scale_packed_to_frame(sws.scale, ctx, source.base.assumingMemoryBound(to: UInt8.self), source.chromaPlane,
                                             Int32(source.bytesPerRow), Int32(source.height), frame)
        guard rows == f.height else { throw MediaError(.codec, "sws_scale wrote \(rows) of \(f.height) rows") }
    }

    private func prepare(_ source: PixelView, width: Int, height: Int,
                         format: AVPixelFormat) throws(MediaError) -> (SwscaleLibrary, OpaquePointer) {
        guard width > 0, height > 0 else { throw MediaError(.unsupported, "cannot scale to \(width)x\(height)") }
        let lease: IdleReleased<SwscaleLibrary, DynamicLibrary.Failure>.Lease
        if let held = self.sws { lease = held } else { lease = try SwscaleLibrary.lease() }
        self.sws = lease
        let sws = lease.resource
        context = sws.getCachedContext(context, Int32(source.width), Int32(source.height), source.layout.avPixelFormat,
                                       Int32(width), Int32(height), format, filter.swsFlags, nil, nil, nil)
        guard let ctx = context else {
            throw MediaError(.unsupported, "libswscale cannot convert \(source.layout) \(source.width)x\(source.height) to \(width)x\(height)")
        }
        return (sws, ctx)
    }
}

/// Output sizes that keep the aspect ratio.
public enum ImageSize {
    /// Fits width×height into maxWidth (never upscales). Results are at least 1 pixel.
    public static func fitting(width: Int, height: Int, maxWidth: Int?) -> (width: Int, height: Int) {
        guard let maxWidth, maxWidth > 0, width > maxWidth else { return (width, height) }
        let h = max(1, Int((Double(height) * Double(maxWidth) / Double(width)).rounded()))
        return (maxWidth, h)
    }

    /// Scales by `factor` (≤ 1), rounded down to even numbers (H.264 4:2:0 needs even sizes).
    public static func evenScaled(width: Int, height: Int, factor: Double) -> (width: Int, height: Int) {
        let f = min(1, max(0, factor))
        let w = max(2, Int(Double(width) * f) & ~1)
        let h = max(2, Int(Double(height) * f) & ~1)
        return (w, h)
    }
}
