import Foundation
@testable import Media
@testable import TestSupport
import Testing

/// Repeated pictures written as skip frames without the encoder (H264FrameRepeater): the bit
/// tools they are made with, and real libx264 streams decoded by FFmpeg with every error check on.
@Suite struct H264RepeatTests {
    @Test func expGolombCodesReadBackAsWritten() throws {
        let unsigned: [UInt32] = [0, 1, 2, 3, 7, 8, 255, 256, 8159, 65_535, 1 << 20]
        let signed: [Int32] = [0, 1, -1, 2, -2, 26, -26, 1000, -1000]
        var w = BitstreamWriter()
        for v in unsigned { w.ue(v) }
        for v in signed { w.se(v) }
        w.bits(0b1011, 4)
        let bytes = w.finish()
        var r = BitstreamReader(bytes)
        for v in unsigned { #expect(try r.ue() == v) }
        for v in signed { #expect(try r.se() == v) }
        #expect(try r.bits(4) == 0b1011)
        #expect(try r.bit() == 1, "the stop bit")
        // ue(v) of the standard's table 9-2: 0 → 1, 1 → 010, 2 → 011, 3 → 00100.
        var t = BitstreamWriter()
        t.ue(0); t.ue(1); t.ue(2); t.ue(3)
        #expect(t.finish() == [0b1010_0110, 0b0100_1000])
    }

    @Test func emulationPreventionRoundTrips() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            // Mostly zeros and small values: the bytes start codes are made of.
            let rbsp = (0..<Int.random(in: 1...64, using: &generator)).map { _ in UInt8([0, 0, 0, 1, 2, 3, 4, 0xff].randomElement(using: &generator)!) }
            let escaped = H264NALUnits.escape(rbsp)
            for i in 0..<max(0, escaped.count - 2) {
                #expect(!(escaped[i] == 0 && escaped[i + 1] == 0 && escaped[i + 2] <= 2), "a start code inside \(escaped)")
            }
            #expect(H264NALUnits.unescape(escaped[...]) == rbsp)
        }
        let stream: [UInt8] = [0, 0, 0, 1, 0x67, 1, 2, 0, 0, 1, 0x68, 3, 0, 0, 0, 1, 0x65, 9]
        #expect(H264NALUnits.split(annexB: stream).map(Array.init) == [[0x67, 1, 2], [0x68, 3], [0x65, 9]])
    }

    /// 600 slots at 10 fps: every fourth a real picture (two alternating ones), the rest repeats,
    /// so the stream has hundreds of skip frames, frame_num wrapping (it has 4 bits in libx264's
    /// streams) and keyframes after repeats (every 100 encoded frames). FFmpeg decodes it with
    /// -err_detect explode, and each repeat is exactly the frame before it.
    @Test func repeatsDecodeAsExactlyTheFrameBefore() throws {
        let recorder = try VideoEncoding.recorder(settings: VideoSettings(width: 96, height: 64, fps: 10, maxBitrate: 500_000))
        let pictures = [MediaTests.Synthetic(width: 96, height: 64, layout: .bgrx),
                        MediaTests.Synthetic(width: 96, height: 64, layout: .rgb565le)]
        var isRepeat: [Bool] = []
        for slot in 0..<600 {
            if slot % 4 == 0 {
                try recorder.append(pictures[(slot / 4) % 2].view, timestampMs: Int64(slot * 100))
            } else {
                try recorder.repeatPrevious(timestampMs: Int64(slot * 100))
            }
            isRepeat.append(slot % 4 != 0)
        }
        let mp4 = try recorder.finish(durationMs: 60_000)
        #expect(recorder.framesEncoded == 600)
        #expect(recorder.framesRepeated == 450, "libx264's streams are repeated without the encoder")

        let dir = TestPaths.tempDir("h264rep")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = dir + "/repeats.mp4"
        try Data(mp4).write(to: URL(fileURLWithPath: file))
        let decode = try runProcess("/usr/bin/ffmpeg", ["-v", "error", "-err_detect", "+crccheck+bitstream+buffer+explode",
                                                        "-i", file, "-f", "framemd5", "-"])
        #expect(decode.code == 0 && decode.stderr.isEmpty, "FFmpeg: \(decode.stderr)")
        let hashes = decode.stdout.split(separator: "\n").filter { !$0.hasPrefix("#") }.map { $0.split(separator: ",").last!.trimmingCharacters(in: .whitespaces) }
        #expect(hashes.count == 600)
        guard hashes.count == 600 else { return }
        for slot in 1..<600 where isRepeat[slot] {
            #expect(hashes[slot] == hashes[slot - 1], "slot \(slot) repeats slot \(slot - 1)")
        }
        for slot in stride(from: 4, to: 600, by: 4) {
            #expect(hashes[slot] != hashes[slot - 1], "slot \(slot) shows the other picture")
        }
        let probe = try ImageChecks.ffprobe(file)
        #expect(abs((Double(probe["format"]?["duration"]?.stringValue ?? "") ?? 0) - 60.0) < 0.01)
        let keyframes = try runProcess("/usr/bin/ffprobe", ["-v", "error", "-select_streams", "v", "-skip_frame", "nokey",
                                                            "-show_entries", "frame=pts", "-of", "csv=p=0", file])
        #expect(keyframes.stdout.split(separator: "\n").count >= 2, "a keyframe came after repeats")
        // A repeat is a few bytes: the whole minute is a fraction of its 150 encoded pictures' size.
        let sizes = try runProcess("/usr/bin/ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "packet=size",
                                                        "-of", "csv=p=0", file])
        let small = sizes.stdout.split(separator: "\n").compactMap { Int($0) }.filter { $0 < 32 }
        #expect(small.count == 450, "\(small.count) packets under 32 bytes")
    }

    @Test func aStreamItCannotFollowIsLeftToTheEncoder() {
        // POC type 0 (what libx264 writes with B-frames): the repeater declines.
        var sps = BitstreamWriter()
        sps.bits(66, 8); sps.bits(0, 16)  // baseline profile, flags, level
        sps.ue(0)                         // sps id
        sps.ue(0)                         // log2_max_frame_num_minus4
        sps.ue(0); sps.ue(2)              // pic_order_cnt_type 0, log2_max_poc_lsb_minus4
        sps.ue(1); sps.flag(false)        // max_num_ref_frames, gaps
        sps.ue(5); sps.ue(3); sps.flag(true)
        var pps = BitstreamWriter()
        pps.ue(0); pps.ue(0)
        let extradata = H264NALUnits.join([[0x67] + H264NALUnits.escape(sps.finish()), [0x68] + H264NALUnits.escape(pps.finish())])
        #expect(H264FrameRepeater(extradata: extradata) == nil)
        #expect(H264FrameRepeater(extradata: [0, 0, 0, 1, 0x67]) == nil, "a cut-short header")
    }
}
