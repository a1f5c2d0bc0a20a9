/// A packed image in memory that someone else owns (a shared-memory XImage, an mmap'd
/// framebuffer, a V4L2 buffer). Encoders read it in place; it is valid only as long as its owner
/// says (typically until the next capture).
public struct PixelView {
    public let base: UnsafeRawPointer
    public let width: Int
    public let height: Int
    /// Bytes from one row to the next (X11 bytes_per_line, fbdev line_length); may exceed width×bpp.
    public let bytesPerRow: Int
    public let layout: PixelLayout

    public init(base: UnsafeRawPointer, width: Int, height: Int, bytesPerRow: Int, layout: PixelLayout) {
        precondition(width > 0 && height > 0, "empty image")
        precondition(bytesPerRow >= width * layout.bytesPerPixel, "row stride shorter than a row")
        self.base = base
        self.width = width
        self.height = height
        self.bytesPerRow = bytesPerRow
        self.layout = layout
    }

    /// The second plane of a semi-planar image (NV12 chroma), nil for packed layouts.
    var chromaPlane: UnsafePointer<UInt8>? {
        layout.chromaPlaneOffset(bytesPerRow: bytesPerRow, height: height)
            .map { (base + $0).assumingMemoryBound(to: UInt8.self) }
    }

    /// A rectangle of this image, sharing its memory (a monitor inside a larger X screen).
    public func cropped(x: Int, y: Int, width w: Int, height h: Int) -> PixelView {
        precondition(layout.chromaPlaneOffset(bytesPerRow: bytesPerRow, height: height) == nil, "cannot crop a planar image")
        precondition(x >= 0 && y >= 0 && x + w <= width && y + h <= height, "crop outside the image")
        let offset = y * bytesPerRow + x * layout.bytesPerPixel
        return PixelView(base: base + offset, width: w, height: h, bytesPerRow: bytesPerRow, layout: layout)
    }
}

/// An image this process owns (the result of scaling or converting). Freed when released.
public final class PixelBuffer {
    public let width: Int
    public let height: Int
    public let bytesPerRow: Int
    public let layout: PixelLayout
    let storage: UnsafeMutableRawPointer

    public init(width: Int, height: Int, layout: PixelLayout) {
        self.width = width
        self.height = height
        self.layout = layout
        // Rows aligned to 32 bytes, which libswscale's vector paths like.
        self.bytesPerRow = (width * layout.bytesPerPixel + 31) & ~31
        let chromaBytes = layout.chromaPlaneOffset(bytesPerRow: bytesPerRow, height: height) == nil ? 0 : bytesPerRow * ((height + 1) / 2)
        self.storage = UnsafeMutableRawPointer.allocate(byteCount: bytesPerRow * height + chromaBytes, alignment: 64)
    }

    deinit { storage.deallocate() }

    public var mutableBase: UnsafeMutableRawPointer { storage }

    /// Borrowing view; valid while this buffer is alive.
    public var view: PixelView {
        PixelView(base: UnsafeRawPointer(storage), width: width, height: height, bytesPerRow: bytesPerRow, layout: layout)
    }
}
