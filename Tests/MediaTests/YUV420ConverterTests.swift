import CFFmpeg
@testable import Media
import Testing

/// The recorder's own RGB → YUV 4:2:0 conversion against libswscale's, which it replaces for
/// same-size screen frames: every 32-bit layout, a width that is not a multiple of 8 (the scalar
/// tail), smooth gradients (where both must agree to within rounding) and flat colours.
@Suite struct YUV420ConverterTests {
    /// Planes of one YUV420P picture, described by an AVFrame as libswscale and the converter see it.
    final class Planes {
        let width: Int, height: Int
        let y: UnsafeMutablePointer<UInt8>, u: UnsafeMutablePointer<UInt8>, v: UnsafeMutablePointer<UInt8>
        let frame: UnsafeMutablePointer<AVFrame>

        init(width: Int, height: Int) {
            self.width = width; self.height = height
            y = .allocate(capacity: width * height)
            u = .allocate(capacity: width * height / 4)
            v = .allocate(capacity: width * height / 4)
            frame = .allocate(capacity: 1)
            frame.initialize(to: AVFrame())
            frame.pointee.format = AV_PIX_FMT_YUV420P.rawValue
            frame.pointee.width = Int32(width); frame.pointee.height = Int32(height)
            frame.pointee.data.0 = y; frame.pointee.data.1 = u; frame.pointee.data.2 = v
            frame.pointee.linesize.0 = Int32(width); frame.pointee.linesize.1 = Int32(width / 2); frame.pointee.linesize.2 = Int32(width / 2)
        }

        deinit { y.deallocate(); u.deallocate(); v.deallocate(); frame.deallocate() }

        /// Largest difference per plane.
        func maxDifference(_ other: Planes) -> (y: Int, u: Int, v: Int) {
            func diff(_ a: UnsafeMutablePointer<UInt8>, _ b: UnsafeMutablePointer<UInt8>, _ n: Int) -> Int {
                (0..<n).map { abs(Int(a[$0]) - Int(b[$0])) }.max() ?? 0
            }
            return (diff(y, other.y, width * height), diff(u, other.u, width * height / 4), diff(v, other.v, width * height / 4))
        }
    }

    /// A width×height image in `layout` from `rgb(x, y)`, rows padded like a real capture.
    final class Image {
        let bytes: UnsafeMutableRawPointer
        let view: PixelView
        init(width: Int, height: Int, layout: PixelLayout, rgb: (Int, Int) -> (UInt8, UInt8, UInt8)) {
            let stride = width * 4 + 16
            bytes = .allocate(byteCount: stride * height, alignment: 16)
            let order: [Int]  // byte offsets of r, g, b
            switch layout {
            case .bgrx: order = [2, 1, 0]
            case .rgbx: order = [0, 1, 2]
            case .xrgb: order = [1, 2, 3]
            default: order = [3, 2, 1]  // xbgr
            }
            for yy in 0..<height {
                for xx in 0..<width {
                    let p = bytes + yy * stride + xx * 4
                    let (r, g, b) = rgb(xx, yy)
                    p.storeBytes(of: 0x5a, toByteOffset: 0, as: UInt8.self)
                    p.storeBytes(of: 0x5a, toByteOffset: 3, as: UInt8.self)
                    p.storeBytes(of: r, toByteOffset: order[0], as: UInt8.self)
                    p.storeBytes(of: g, toByteOffset: order[1], as: UInt8.self)
                    p.storeBytes(of: b, toByteOffset: order[2], as: UInt8.self)
                }
            }
            view = PixelView(base: bytes, width: width, height: height, bytesPerRow: stride, layout: layout)
        }
        deinit { bytes.deallocate() }
    }

    @Test(arguments: [PixelLayout.bgrx, .rgbx, .xrgb, .xbgr])
    func matchesLibswscaleOnGradients(layout: PixelLayout) throws {
        let width = 70, height = 36
        let image = Image(width: width, height: height, layout: layout) { x, y in
            (UInt8(x * 255 / (width - 1)), UInt8(y * 255 / (height - 1)), UInt8((x + y) * 255 / (width + height - 2)))
        }
        #expect(YUV420Converter.handles(image.view, width: width, height: height))
        let ours = Planes(width: width, height: height), theirs = Planes(width: width, height: height)
        let scaler = ImageScaler(filter: .bilinear)
        try scaler.convert(image.view, into: ours.frame, direct: true)
        try scaler.convert(image.view, into: theirs.frame, direct: false)
        let d = ours.maxDifference(theirs)
        #expect(d.y <= 2 && d.u <= 3 && d.v <= 3, "largest difference from libswscale: \(d)")
    }

    @Test func flatColoursGetTheirBT601Values() throws {
        // (r, g, b) → (Y, U, V), limited range.
        let cases: [((UInt8, UInt8, UInt8), (Int, Int, Int))] = [
            ((0, 0, 0), (16, 128, 128)), ((255, 255, 255), (235, 128, 128)),
            ((255, 0, 0), (82, 90, 240)), ((0, 255, 0), (145, 54, 34)), ((0, 0, 255), (41, 240, 110)),
        ]
        for (rgb, yuv) in cases {
            let image = Image(width: 18, height: 4, layout: .bgrx) { _, _ in rgb }
            let out = Planes(width: 18, height: 4)
            try ImageScaler().convert(image.view, into: out.frame)
            for i in 0..<(18 * 4) { #expect(abs(Int(out.y[i]) - yuv.0) <= 1, "Y of \(rgb)") }
            for i in 0..<(9 * 2) {
                #expect(abs(Int(out.u[i]) - yuv.1) <= 1, "U of \(rgb)")
                #expect(abs(Int(out.v[i]) - yuv.2) <= 1, "V of \(rgb)")
            }
        }
    }

    @Test func otherSizesAndLayoutsAreLeftToLibswscale() {
        let image = Image(width: 16, height: 8, layout: .bgrx) { _, _ in (1, 2, 3) }
        #expect(!YUV420Converter.handles(image.view, width: 8, height: 4))
        let odd = PixelView(base: image.view.base, width: 15, height: 8, bytesPerRow: image.view.bytesPerRow, layout: .bgrx)
        #expect(!YUV420Converter.handles(odd, width: 15, height: 8))
        let packed = PixelView(base: image.view.base, width: 16, height: 8, bytesPerRow: image.view.bytesPerRow, layout: .bgr24)
        #expect(!YUV420Converter.handles(packed, width: 16, height: 8))
    }
}
