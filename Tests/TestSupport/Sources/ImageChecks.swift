import Foundation
import Media
@testable import Support

/// Checks on images and videos a command returned: decode a payload, compare pixels, probe a file
/// with ffprobe, pull one frame out with ffmpeg.
enum ImageChecks {
    static func image(_ payload: JSONValue) throws -> DecodedImage {
        guard let b64 = payload["base64"]?.stringValue, let data = Data(base64Encoded: b64) else {
            throw TestFailure("payload has no base64: \(payload)")
        }
        return payload["format"]?.stringValue == "png" ? try ImageDecoder.decodePNG([UInt8](data)) : try ImageDecoder.decodeJPEG([UInt8](data))
    }

    static func near(_ p: (r: UInt8, g: UInt8, b: UInt8), _ rgb: UInt32, tolerance: Int = 16) -> Bool {
        abs(Int(p.r) - Int(rgb >> 16 & 0xff)) <= tolerance && abs(Int(p.g) - Int(rgb >> 8 & 0xff)) <= tolerance
            && abs(Int(p.b) - Int(rgb & 0xff)) <= tolerance
    }

    static func hex(_ p: (r: UInt8, g: UInt8, b: UInt8)) -> String {
        String(format: "%02x%02x%02x", p.r, p.g, p.b)
    }

    static func ffprobe(_ file: String) throws -> JSONValue {
        let r = try runProcess("/usr/bin/ffprobe", ["-v", "error", "-count_frames", "-print_format", "json",
                                                     "-show_entries", "stream=codec_name,width,height,nb_read_frames:format=duration",
                                                     file])
        guard r.code == 0, let v = JSONValue.parse(r.stdout) else { throw TestFailure("ffprobe failed: \(r.stderr)") }
        return v
    }

    /// One frame of `file` at `seconds` (negative = from the end), decoded.
    static func frame(of file: String, at seconds: Double) throws -> DecodedImage {
        let out = TestPaths.tempDir("frame") + "/f.png"
        defer { try? FileManager.default.removeItem(atPath: (out as NSString).deletingLastPathComponent) }
        let seek = seconds < 0 ? ["-sseof", String(seconds)] : ["-ss", String(seconds)]
        let r = try runProcess("/usr/bin/ffmpeg", ["-v", "error"] + seek + ["-i", file, "-frames:v", "1", "-y", out])
        guard r.code == 0 else { throw TestFailure("ffmpeg frame extraction failed: \(r.stderr)") }
        return try ImageDecoder.decodePNG([UInt8](Data(contentsOf: URL(fileURLWithPath: out))))
    }
}
