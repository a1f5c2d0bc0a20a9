import Foundation
@testable import Media
@testable import TestSupport
import Testing

/// The PNG writer's strips: an image cut into pieces compressed on separate threads must still be
/// one valid zlib stream with every pixel in place, in each layout it reads in place. Each file is
/// decoded twice and compared pixel by pixel: by libpng (what users' viewers use) and by
/// `StrictPNGDecoder` (Python's zlib: every CRC, the one stream's end and Adler-32); the screen-sized
/// one by ffmpeg's own PNG decoder too.
@Suite struct PNGStripTests {
    /// A screen-like picture: flat areas, a gradient band and a busy band of "text" (a hash), so
    /// that deflate finds matches that cross the strips' seams and literals that do not repeat.
    static func color(x: Int, y: Int) -> (r: UInt8, g: UInt8, b: UInt8) {
        if y % 97 < 30 { return (0xe8, 0xe8, 0xee) }
        if x < 150 { return (UInt8(y & 0xff), UInt8(x & 0xff), 0x40) }
        let h = UInt32(truncatingIfNeeded: (x &* 73856093) ^ (y &* 19349663))
        return h % 5 == 0 ? (0x20, 0x20, UInt8(h >> 8 & 0xff)) : (0xff, 0xff, 0xff)
    }

    /// width×height in `layout` (a 4- or 3-byte RGB layout), rows padded by 12 bytes.
    final class Picture {
        let bytes: UnsafeMutableRawPointer
        let view: PixelView

        init(width: Int, height: Int, layout: PixelLayout) {
            let bpp = layout.bytesPerPixel
            let stride = width * bpp + 12
            bytes = .allocate(byteCount: stride * height, alignment: 16)
            bytes.initializeMemory(as: UInt8.self, repeating: 0x5A, count: stride * height)
            let (r, g, b): (Int, Int, Int)
            switch layout {
            case .bgrx, .bgr24: (r, g, b) = (2, 1, 0)
            case .rgbx, .rgb24: (r, g, b) = (0, 1, 2)
            case .xrgb: (r, g, b) = (1, 2, 3)
            default: (r, g, b) = (3, 2, 1)  // xbgr
            }
            let p = bytes.assumingMemoryBound(to: UInt8.self)
            for y in 0..<height {
                for x in 0..<width {
                    let c = PNGStripTests.color(x: x, y: y), o = y * stride + x * bpp
                    p[o + r] = c.r; p[o + g] = c.g; p[o + b] = c.b
                }
            }
            view = PixelView(base: bytes, width: width, height: height, bytesPerRow: stride, layout: layout)
        }

        deinit { bytes.deallocate() }
    }

    static func expectExact(_ decoded: DecodedImage, width: Int, height: Int) {
        guard decoded.width == width, decoded.height == height, decoded.rgb.count == width * height * 3 else {
            Issue.record("decoded \(decoded.width)x\(decoded.height) (\(decoded.rgb.count) bytes), not \(width)x\(height)")
            return
        }
        var wrong = 0
        for y in 0..<height {
            for x in 0..<width where decoded.pixel(x: x, y: y) != color(x: x, y: y) { wrong += 1 }
        }
        #expect(wrong == 0, "\(wrong) pixels differ")
    }

    /// Both decoders, each compared with the picture.
    static func expectDecodesExactly(_ png: [UInt8], width: Int, height: Int) throws {
        expectExact(try ImageDecoder.decodePNG(png), width: width, height: height)
        expectExact(try StrictPNGDecoder.decode(png), width: width, height: height)
    }

    @Test(arguments: [PixelLayout.bgrx, .rgbx, .xrgb, .xbgr, .bgr24, .rgb24], [1, 2, 3, 4])
    func stripsJoinIntoOneExactImage(layout: PixelLayout, strips: Int) throws {
        let picture = Picture(width: 333, height: 257, layout: layout)
        let png = try PNGEncoder.encode(picture.view, strips: strips)
        try Self.expectDecodesExactly(png, width: 333, height: 257)
    }

    /// One IDAT chunk per strip, so the count the test asked for is the count that was joined.
    @Test(arguments: [1, 2, 3, 4])
    func oneIDATPerStrip(strips: Int) throws {
        let picture = Picture(width: 333, height: 257, layout: .bgrx)
        let png = try PNGEncoder.encode(picture.view, strips: strips)
        var pos = 8, idat = 0
        while pos + 8 <= png.count {
            let length = png[pos..<pos + 4].reduce(0) { $0 << 8 | Int($1) }
            if png[pos + 4..<pos + 8].elementsEqual("IDAT".utf8) { idat += 1 }
            pos += 12 + length
        }
        #expect(idat == strips)
    }

    /// Rows wider than deflate's 32 KiB window (a seam's dictionary is then part of one row), and
    /// more strips asked for than there are rows.
    @Test func wideRowsAndFewRows() throws {
        let wide = Picture(width: 12_000, height: 9, layout: .bgrx)
        try Self.expectDecodesExactly(try PNGEncoder.encode(wide.view, strips: 4), width: 12_000, height: 9)
        let short = Picture(width: 40, height: 2, layout: .rgbx)
        try Self.expectDecodesExactly(try PNGEncoder.encode(short.view, strips: 4), width: 40, height: 2)
        let line = Picture(width: 1, height: 1, layout: .rgb24)
        try Self.expectDecodesExactly(try PNGEncoder.encode(line.view, strips: 4), width: 1, height: 1)
    }

    /// A screen-sized frame takes the machine's own strip count; ffmpeg decodes it to the same pixels.
    @Test func screenSizedFrameDecodesInFFmpeg() throws {
        let picture = Picture(width: 1920, height: 1080, layout: .bgrx)
        let png = try PNGEncoder.encode(picture.view)
        try Self.expectDecodesExactly(png, width: 1920, height: 1080)
        let dir = TestPaths.tempDir("png-strips")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Data(png).write(to: URL(fileURLWithPath: dir + "/f.png"))
        let r = try runProcess("/usr/bin/ffmpeg", ["-v", "error", "-i", dir + "/f.png", "-f", "rawvideo", "-pix_fmt", "rgb24", "-y", dir + "/f.rgb"])
        #expect(r.code == 0, "ffmpeg: \(r.stderr)")
        let rgb = [UInt8](try Data(contentsOf: URL(fileURLWithPath: dir + "/f.rgb")))
        Self.expectExact(DecodedImage(width: 1920, height: 1080, rgb: rgb), width: 1920, height: 1080)
    }

    @Test func stripCountFollowsCoresAndSize() {
        let cores = max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        #expect(PNGEncoder.strips(rawBytes: 6_220_800, rows: 1080) == min(cores, 4))
        #expect(PNGEncoder.strips(rawBytes: 500_000, rows: 300) == 1)
    }
}
