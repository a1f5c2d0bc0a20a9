@testable import Config
import Foundation
@testable import HostPresence
@testable import Kit
import Media
@testable import NodeCLI
@testable import Registry
@testable import Store
@testable import Support
@testable import TestSupport
import Testing

/// The shared media library (screen now, camera next): layouts, JPEG/PNG, scaling, MP4.
@Suite struct MediaTests {
    /// A width×height image in `layout` with four coloured quadrants (R, G, B, white), rows padded.
    final class Synthetic {
        let bytes: UnsafeMutableRawPointer
        let view: PixelView

        init(width: Int, height: Int, layout: PixelLayout, padding: Int = 24) {
            let stride = width * layout.bytesPerPixel + padding
            // NV12's chroma plane follows the luma rows; 0x80 there is neutral (a grey picture).
            let count = stride * height * (layout == .nv12 ? 2 : 1)
            bytes = .allocate(byteCount: count, alignment: 16)
            bytes.initializeMemory(as: UInt8.self, repeating: layout == .nv12 ? 0x80 : 0xAA, count: count)
            for y in 0..<height {
                for x in 0..<width {
                    Synthetic.put(bytes + y * stride + x * layout.bytesPerPixel, layout,
                                  Synthetic.color(x: x, y: y, width: width, height: height))
                }
            }
            view = PixelView(base: bytes, width: width, height: height, bytesPerRow: stride, layout: layout)
        }

        deinit { bytes.deallocate() }

        static func color(x: Int, y: Int, width: Int, height: Int) -> UInt32 {
            switch (x >= width / 2, y >= height / 2) {
            case (false, false): return 0xff0000
            case (true, false): return 0x00ff00
            case (false, true): return 0x0000ff
            case (true, true): return 0xffffff
            }
        }

        /// Three 8-bit channels cut to `bits` and placed at `shift` in a 16-bit word.
        static func pack(_ a: UInt8, _ aShift: Int, _ aBits: Int, _ b: UInt8, _ bShift: Int, _ bBits: Int,
                         _ c: UInt8, _ cShift: Int, _ cBits: Int) -> UInt16 {
            let x = UInt16(a >> UInt8(8 - aBits)) << UInt16(aShift)
            let y = UInt16(b >> UInt8(8 - bBits)) << UInt16(bShift)
            let z = UInt16(c >> UInt8(8 - cBits)) << UInt16(cShift)
            return x | y | z
        }

        static func store16(_ px: UnsafeMutablePointer<UInt8>, _ v: UInt16) {
            px[0] = UInt8(v & 0xff)
            px[1] = UInt8(v >> 8)
        }

        static func put(_ p: UnsafeMutableRawPointer, _ layout: PixelLayout, _ rgb: UInt32) {
            let r = UInt8(rgb >> 16 & 0xff), g = UInt8(rgb >> 8 & 0xff), b = UInt8(rgb & 0xff)
            let px = p.assumingMemoryBound(to: UInt8.self)
            switch layout {
            case .bgrx: px[0] = b; px[1] = g; px[2] = r; px[3] = 0
            case .rgbx: px[0] = r; px[1] = g; px[2] = b; px[3] = 0
            case .xrgb: px[0] = 0; px[1] = r; px[2] = g; px[3] = b
            case .xbgr: px[0] = 0; px[1] = b; px[2] = g; px[3] = r
            case .bgr24: px[0] = b; px[1] = g; px[2] = r
            case .rgb24: px[0] = r; px[1] = g; px[2] = b
            case .rgb565le: store16(px, pack(r, 11, 5, g, 5, 6, b, 0, 5))
            case .bgr565le: store16(px, pack(b, 11, 5, g, 5, 6, r, 0, 5))
            case .rgb555le: store16(px, pack(r, 10, 5, g, 5, 5, b, 0, 5))
            case .yuyv:
                // Full-range-ish BT.601 luma only (grey), enough for a smoke test.
                let luma: Int = 299 * Int(r) + 587 * Int(g) + 114 * Int(b)
                px[0] = UInt8(luma / 1000)
                px[1] = 128
            case .nv12:
                let luma: Int = 299 * Int(r) + 587 * Int(g) + 114 * Int(b)
                px[0] = UInt8(luma / 1000)
            }
        }
    }

    static func checkQuadrants(_ img: DecodedImage, tolerance: Int) {
        for (fx, fy) in [(0.25, 0.25), (0.75, 0.25), (0.25, 0.75), (0.75, 0.75)] {
            let x = Int(Double(img.width) * fx), y = Int(Double(img.height) * fy)
            let want = Synthetic.color(x: x, y: y, width: img.width, height: img.height)
            let got = img.pixel(x: x, y: y)
            #expect(ImageChecks.near(got, want, tolerance: tolerance), "(\(x),\(y)) \(ImageChecks.hex(got)) want \(String(want, radix: 16))")
        }
    }

    static let rgbLayouts: [PixelLayout] = [.bgrx, .rgbx, .xrgb, .xbgr, .bgr24, .rgb24, .rgb565le, .bgr565le, .rgb555le]

    @Test(arguments: rgbLayouts)
    func jpegRoundTripForEveryLayout(layout: PixelLayout) throws {
        let img = Synthetic(width: 96, height: 64, layout: layout)
        let jpeg = try JPEGEncoder().encode(img.view, quality: 90)
        #expect(jpeg.starts(with: [0xff, 0xd8]))
        let decoded = try ImageDecoder.decodeJPEG(jpeg)
        #expect(decoded.width == 96 && decoded.height == 64)
        Self.checkQuadrants(decoded, tolerance: 24)
    }

    @Test(arguments: rgbLayouts)
    func pngRoundTripIsExactForFullScaleColours(layout: PixelLayout) throws {
        let img = Synthetic(width: 50, height: 30, layout: layout)
        let png = try PNGEncoder.encode(img.view)
        #expect(png.starts(with: [0x89, 0x50, 0x4e, 0x47]))
        let decoded = try ImageDecoder.decodePNG(png)
        #expect(decoded.width == 50 && decoded.height == 30)
        Self.checkQuadrants(decoded, tolerance: 0)
    }

    @Test func yuyvEncodesToJPEG() throws {
        let img = Synthetic(width: 64, height: 32, layout: .yuyv, padding: 0)
        let decoded = try ImageDecoder.decodeJPEG(try JPEGEncoder().encode(img.view, quality: 85))
        #expect(decoded.width == 64 && decoded.height == 32)
    }

    /// NV12 with padded rows: the chroma plane is found after height × stride, and the luma of the
    /// quadrants survives the conversion (red is darker than green).
    @Test func nv12EncodesToJPEG() throws {
        let img = Synthetic(width: 64, height: 32, layout: .nv12, padding: 16)
        let decoded = try ImageDecoder.decodeJPEG(try JPEGEncoder().encode(img.view, quality: 90))
        #expect(decoded.width == 64 && decoded.height == 32)
        let red = Int(decoded.pixel(x: 16, y: 8).g), green = Int(decoded.pixel(x: 48, y: 8).g)
        #expect(green > red + 40, "green quadrant \(green) should be much brighter than red \(red)")
    }

    @Test func cropSharesMemoryAndPicksTheRectangle() throws {
        let img = Synthetic(width: 100, height: 80, layout: .bgrx)
        let crop = img.view.cropped(x: 50, y: 0, width: 50, height: 40)
        #expect(crop.base == img.view.base + 200)
        let png = try ImageDecoder.decodePNG(try PNGEncoder.encode(crop))
        #expect(ImageChecks.near(png.pixel(x: 10, y: 10), 0x00ff00, tolerance: 0))
    }

    @Test func stillEncoderFitsMaxWidthAndBudget() throws {
        let img = Synthetic(width: 400, height: 300, layout: .bgrx)
        let encoder = try StillImageEncoder()
        let same = try encoder.encode(img.view, format: .jpeg(quality: 80), maxWidth: 1600, maxBase64Bytes: 1 << 20)
        #expect(same.width == 400 && same.height == 300)
        let scaled = try encoder.encode(img.view, format: .png, maxWidth: 200, maxBase64Bytes: 1 << 20)
        #expect(scaled.width == 200 && scaled.height == 150)
        Self.checkQuadrants(try ImageDecoder.decodePNG(scaled.data), tolerance: 0)
        let tight = try encoder.encode(img.view, format: .jpeg(quality: 95), maxWidth: nil, maxBase64Bytes: 1200)
        #expect(Base64Size.of(tight.data.count) <= 1200)
        #expect(tight.width < 400)
        #expect(throws: MediaError.self) { try encoder.encode(img.view, format: .png, maxWidth: nil, maxBase64Bytes: 20) }
    }

    @Test func sizesKeepAspectAndEvenness() {
        #expect(ImageSize.fitting(width: 1920, height: 1080, maxWidth: 1600) == (1600, 900))
        #expect(ImageSize.fitting(width: 800, height: 600, maxWidth: 1600) == (800, 600))
        #expect(ImageSize.fitting(width: 1920, height: 1080, maxWidth: 900) == (900, 506))
        #expect(ImageSize.evenScaled(width: 1919, height: 1079, factor: 1) == (1918, 1078))
        #expect(ImageSize.evenScaled(width: 1920, height: 1080, factor: 0.5) == (960, 540))
        #expect(Base64Size.of(3) == 4 && Base64Size.of(4) == 8 && Base64Size.rawBytes(fitting: 8) == 6)
    }

    @Test func layoutsFromChannelBitfields() {
        #expect(PixelLayout.fromChannels(bitsPerPixel: 32, redShift: 16, redBits: 8, greenShift: 8, greenBits: 8, blueShift: 0, blueBits: 8) == .bgrx)
        #expect(PixelLayout.fromChannels(bitsPerPixel: 32, redShift: 0, redBits: 8, greenShift: 8, greenBits: 8, blueShift: 16, blueBits: 8) == .rgbx)
        #expect(PixelLayout.fromChannels(bitsPerPixel: 16, redShift: 11, redBits: 5, greenShift: 5, greenBits: 6, blueShift: 0, blueBits: 5) == .rgb565le)
        #expect(PixelLayout.fromChannels(bitsPerPixel: 24, redShift: 16, redBits: 8, greenShift: 8, greenBits: 8, blueShift: 0, blueBits: 8) == .bgr24)
        #expect(PixelLayout.fromChannels(bitsPerPixel: 8, redShift: 5, redBits: 3, greenShift: 2, greenBits: 3, blueShift: 0, blueBits: 2) == nil)
    }

    @Test func mp4RecorderWritesAPlayableClipWithExactDuration() throws {
        let recorder = try VideoEncoding.recorder(settings: VideoSettings(width: 96, height: 64, fps: 10, maxBitrate: 500_000))
        #expect(recorder.encoderName == "libx264")
        let frames = [Synthetic(width: 96, height: 64, layout: .bgrx), Synthetic(width: 96, height: 64, layout: .rgb565le)]
        // 25 frames on a 100 ms grid with a gap (slots 10...14 skipped, as the pacer does when late).
        let slots = Array(0..<10) + Array(15..<30)
        for (i, slot) in slots.enumerated() { try recorder.append(frames[i % 2].view, timestampMs: Int64(slot * 100)) }
        #expect(throws: MediaError.self) { try recorder.append(frames[0].view, timestampMs: 0) }
        let mp4 = try recorder.finish(durationMs: 3000)
        let dir = TestPaths.tempDir("mp4")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = dir + "/clip.mp4"
        try Data(mp4).write(to: URL(fileURLWithPath: file))
        let probe = try ImageChecks.ffprobe(file)
        let stream = probe["streams"]?.arrayValue?.first
        #expect(stream?["codec_name"] == "h264")
        #expect(stream?["width"] == 96 && stream?["height"] == 64)
        #expect(stream?["nb_read_frames"] == "25")
        #expect(abs((Double(probe["format"]?["duration"]?.stringValue ?? "") ?? 0) - 3.0) < 0.01)
    }

    @Test func mp4RecorderScalesFramesOfAnotherSize() throws {
        let recorder = try VideoEncoding.recorder(settings: VideoSettings(width: 48, height: 32, fps: 5, maxBitrate: 200_000))
        let big = Synthetic(width: 96, height: 64, layout: .bgrx)
        for i in 0..<5 { try recorder.append(big.view, timestampMs: Int64(i * 200)) }
        let mp4 = try recorder.finish(durationMs: 1000)
        let dir = TestPaths.tempDir("mp4")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Data(mp4).write(to: URL(fileURLWithPath: dir + "/c.mp4"))
        let frame = try ImageChecks.frame(of: dir + "/c.mp4", at: 0)
        #expect(frame.width == 48 && frame.height == 32)
        #expect(ImageChecks.near(frame.pixel(x: 8, y: 6), 0xff0000, tolerance: 48))
    }

    /// AAC muxing on the shared clock: chunks start before the clip (trimmed), one is lost (the gap
    /// becomes silence) and they run past the end (cut at clipDurationMs).
    @Test func mp4RecorderMuxesAACAudioByTimestamp() throws {
        let audio = AudioSettings(sampleRate: 48_000, channels: 1, clipDurationMs: 1000)
        let recorder = try VideoEncoding.recorder(settings: VideoSettings(width: 96, height: 64, fps: 10, maxBitrate: 500_000), audio: audio)
        #expect(recorder.hasAudioTrack)
        let frame = Synthetic(width: 96, height: 64, layout: .bgrx)
        let clipStart: UInt64 = 5_000_000_000
        var nextChunk: Int64 = -200  // ms, relative to the clip start
        for i in 0..<10 {
            try recorder.append(frame.view, timestampMs: Int64(i * 100))
            // 20 ms chunks of a 1 kHz sine up to this frame's end, except 400..<500 ms (lost).
            while nextChunk < Int64(i + 1) * 100 + 100 {
                defer { nextChunk += 20 }
                if (400..<500).contains(nextChunk) { continue }
                let samples = (0..<960).map { n in
                    Int16(10_000 * sin(2 * Double.pi * 1000 * Double(Int(nextChunk) * 48 + n) / 48_000))
                }
                let ts = UInt64(Int64(clipStart) + nextChunk * 1_000_000)
                try recorder.appendAudio(AudioChunk(samples: samples, frames: 960, channels: 1, timestampNs: ts), clipStartNs: clipStart)
            }
        }
        let mp4 = try recorder.finish(durationMs: 1000)
        #expect(recorder.audioPacketsWritten > 40)
        let dir = TestPaths.tempDir("mp4a")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = dir + "/clip.mp4"
        try Data(mp4).write(to: URL(fileURLWithPath: file))
        let streams = try AudioProbe.streams(file)
        let aac = AudioProbe.stream(streams, "audio")
        #expect(aac?["codec_name"] == "aac")
        #expect(abs(AudioProbe.duration(aac) - 1.0) < 0.05, "audio duration \(AudioProbe.duration(aac))")
        let pcm = try AudioProbe.samples(file)
        #expect(abs(pcm.count - 48_000) < 2400, "decoded \(pcm.count) samples")
        guard pcm.count > 40_000 else { return }
        #expect(AudioProbe.rms(pcm[4800..<14400]) > 5000)
        #expect(abs(AudioProbe.frequency(pcm[4800..<14400]) - 1000) < 20)
        #expect(AudioProbe.rms(pcm[20160..<23040]) < 500, "the lost 400-500 ms are silent")
        #expect(AudioProbe.rms(pcm[28800..<38400]) > 5000)
    }

    @Test func oddVideoSizesAreRefused() {
        #expect(throws: MediaError.self) { try VideoEncoding.recorder(settings: VideoSettings(width: 95, height: 64, fps: 10, maxBitrate: 100_000)) }
    }
}
