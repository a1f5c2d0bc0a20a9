import Foundation
@testable import Media
@testable import TestSupport
import Testing

/// JPEG encoding in strips on several cores, joined at restart markers, on screenshots of real
/// applications from KDE's documentation (kwin-data): widths and heights that are not whole MCUs,
/// a window taller than it is wide.
@Suite struct JPEGStripTests {
    static let docs = "/usr/share/doc/HTML/en/kcontrol/"
    static let screenshots = ["windowspecific/akregator-fav.png", "windowspecific/emacs-info.png", "kwintabbox/taskswitcher.png"]

    /// The screenshot as BGRX (what X11 and wlroots screens hold), with padded rows as capture memory has.
    static func screen(_ name: String) throws -> (pixels: [UInt8], width: Int, height: Int, stride: Int) {
        let data = try #require(FileManager.default.contents(atPath: docs + name),
                                "\(docs + name) is missing: scripts/setup installs it with kwin-wayland (kwin-data)")
        let png = try ImageDecoder.decodePNG([UInt8](data))
        let stride = png.width * 4 + 64
        var pixels = [UInt8](repeating: 0xEE, count: stride * png.height)
        for y in 0..<png.height {
            for x in 0..<png.width {
                let p = png.pixel(x: x, y: y), at = y * stride + x * 4
                pixels[at] = p.b; pixels[at + 1] = p.g; pixels[at + 2] = p.r
            }
        }
        return (pixels, png.width, png.height, stride)
    }

    /// Joined strips are byte for byte what libjpeg writes for the whole image in one pass with the
    /// same restart interval: the join puts markers and headers exactly where the encoder would.
    @Test(arguments: screenshots, [2, 3, 5])
    func stripsJoinToWhatOneEncoderWrites(name: String, strips: Int) throws {
        let s = try Self.screen(name)
        try s.pixels.withUnsafeBytes { raw throws in
            let view = PixelView(base: raw.baseAddress!, width: s.width, height: s.height, bytesPerRow: s.stride, layout: .bgrx)
            let plan = JPEGStrips(width: s.width, height: s.height, count: strips)
            #expect(plan.rows.count == min(strips, (s.height + 15) / 16), "\(plan.rows)")
            let joined = try JPEGEncoder().encode(view, quality: 80, strips: strips)
            let whole = try JPEGEncoder.compress(view, rows: 0..<s.height, colorSpace: view.layout.jpegColorSpace!, quality: 80,
                                                 restartInterval: plan.restartInterval)
            #expect(joined == whole, "\(name) in \(strips) strips: \(joined.count) bytes, one pass \(whole.count)")
        }
    }

    /// An outside decoder (libjpeg-turbo's djpeg) reads the joined stream without a warning, and its
    /// pixels are exactly those of the same picture encoded in one piece without restart markers.
    @Test(arguments: screenshots)
    func anOutsideDecoderSeesThePictureOfOnePieceEncoding(name: String) throws {
        let s = try Self.screen(name)
        let dir = TestPaths.tempDir("jpeg-strips")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try s.pixels.withUnsafeBytes { raw throws in
            let view = PixelView(base: raw.baseAddress!, width: s.width, height: s.height, bytesPerRow: s.stride, layout: .bgrx)
            let joined = try JPEGEncoder().encode(view, quality: 80, strips: 3)
            let single = try JPEGEncoder().encode(view, quality: 80, strips: 1)
            #expect(joined != single, "three strips carry restart markers")
            var decoded: [String] = []
            for (file, bytes) in [("joined.jpg", joined), ("single.jpg", single)] {
                try Data(bytes).write(to: URL(fileURLWithPath: "\(dir)/\(file)"))
                let r = try runProcess("/usr/bin/djpeg", ["-ppm", "-outfile", "\(dir)/\(file).ppm", "\(dir)/\(file)"])
                #expect(r.code == 0 && r.stderr.isEmpty, "djpeg \(file): \(r.code) \(r.stderr)")
                decoded.append("\(dir)/\(file).ppm")
            }
            let a = try #require(FileManager.default.contents(atPath: decoded[0]))
            let b = try #require(FileManager.default.contents(atPath: decoded[1]))
            #expect(a.count > s.width * s.height * 3 && a == b, "\(name): the joined stream decodes to other pixels")
            // And within the quality's error of the screen itself.
            let ours = try ImageDecoder.decodeJPEG(joined)
            var worst = 0
            for y in stride(from: 0, to: s.height, by: 7) {
                for x in stride(from: 0, to: s.width, by: 5) {
                    let at = y * s.stride + x * 4, p = ours.pixel(x: x, y: y)
                    worst = max(worst, abs(Int(p.g) - Int(s.pixels[at + 1])))
                }
            }
            #expect(worst < 128, "green off by \(worst) somewhere: not the screenshot")
        }
    }

    /// Strips are whole MCU rows (the last takes what is left), and a very wide image gets more
    /// strips than asked when one strip would hold more MCUs than a restart interval can count.
    @Test func thePlanKeepsStripsWholeAndIntervalsCountable() {
        let hd = JPEGStrips(width: 1920, height: 1080, count: 2)
        #expect(hd.rows == [0..<544, 544..<1080] && hd.restartInterval == 34 * 120)
        let small = JPEGStrips(width: 64, height: 20, count: 4)
        #expect(small.rows == [0..<16, 16..<20] && small.restartInterval == 64 / 16)
        let one = JPEGStrips(width: 1920, height: 1080, count: 1)
        #expect(one.rows == [0..<1080] && one.restartInterval == 0)
        let wide = JPEGStrips(width: 16384, height: 8192, count: 2)
        #expect(wide.rows.count > 2 && wide.restartInterval <= 65535, "\(wide.rows.count) strips of \(wide.restartInterval) MCUs")
        #expect(wide.rows.last?.upperBound == 8192 && wide.rows.dropLast().allSatisfy { $0.count % 16 == 0 })
    }
}
