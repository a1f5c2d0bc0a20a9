import Foundation
import Media
@testable import TestSupport
import Testing
@testable import Video

/// The encoder choice: a hardware H.264 encoder is tried first and a recording falls back to
/// libx264 when it does not open (no V4L2 M2M device on this machine; VAAPI without a GPU surface
/// context never opens with plain frames), and says why in `rejectedEncoders`.
@Suite struct H264EncoderFallbackTests {
    static let settings = VideoSettings(width: 64, height: 48, fps: 10, maxBitrate: 400_000)

    @Test func hardwareEncodersThatDoNotOpenFallBackToLibx264() throws {
        let recorder = try MP4Recorder(settings: Self.settings, encoders: ["no_such_encoder", "h264_vaapi", "libx264"])
        #expect(recorder.encoderName == "libx264")
        #expect(recorder.rejectedEncoders.count == 2, "\(recorder.rejectedEncoders)")
        #expect(recorder.rejectedEncoders.first == "no_such_encoder: not in this libavcodec")
        #expect(recorder.rejectedEncoders.last?.hasPrefix("h264_vaapi: does not open") == true, "\(recorder.rejectedEncoders)")
        // The fallback records normally.
        let pixels = UnsafeMutableRawPointer.allocate(byteCount: 64 * 48 * 4, alignment: 16)
        defer { pixels.deallocate() }
        pixels.initializeMemory(as: UInt8.self, repeating: 0x80, count: 64 * 48 * 4)
        let view = PixelView(base: pixels, width: 64, height: 48, bytesPerRow: 64 * 4, layout: .bgrx)
        for i in 0..<5 { try recorder.append(view, timestampMs: Int64(i * 100)) }
        let mp4 = try recorder.finish(durationMs: 500)
        #expect(mp4.count > 500 && recorder.framesEncoded == 5)
    }

    @Test func theDefaultOrderTriesV4L2MemoryToMemoryFirst() throws {
        #expect(H264Encoders.preference.first == "h264_v4l2m2m")
        let recorder = try MP4Recorder(settings: Self.settings)
        if FileManager.default.fileExists(atPath: "/dev/video0") {
            #expect(["h264_v4l2m2m", "libx264"].contains(recorder.encoderName))
        } else {
            // No V4L2 device at all: the hardware encoder cannot open, libx264 records.
            #expect(recorder.encoderName == "libx264")
            #expect(recorder.rejectedEncoders.first?.hasPrefix("h264_v4l2m2m: does not open") == true, "\(recorder.rejectedEncoders)")
        }
    }

    @Test func noEncoderThatOpensIsAnError() {
        // libavcodec's default H.264 encoder is still tried last, so only an empty libavcodec fails;
        // an unknown name alone falls through to it.
        let recorder = try? MP4Recorder(settings: Self.settings, encoders: ["no_such_encoder"])
        #expect(recorder?.encoderName.isEmpty == false)
        #expect(recorder?.rejectedEncoders == ["no_such_encoder: not in this libavcodec"])
    }
}
