@testable import CameraCapability
@testable import Config
import Foundation
@testable import HostPresence
@testable import Kit
@testable import NodeCLI
@testable import Registry
@testable import Store
@testable import Support
@testable import TestSupport
import Testing

/// The pure parts of the camera capability: format/size choice, quality scale, MJPEG checks, params.
@Suite struct CameraUnitTests {
    static let both: [CameraPixelFormat: [FrameSize]] = [
        .yuyv: [FrameSize(width: 640, height: 480), FrameSize(width: 1280, height: 720)],
        .mjpeg: [FrameSize(width: 640, height: 480), FrameSize(width: 1280, height: 720), FrameSize(width: 1920, height: 1080)],
    ]

    @Test func planPrefersMJPEGPassthroughAtTheFinalSize() {
        #expect(CapturePlan.choose(Self.both, maxWidth: 1920) == CapturePlan(format: .mjpeg, size: FrameSize(width: 1920, height: 1080)))
        #expect(CapturePlan.choose(Self.both, maxWidth: 640) == CapturePlan(format: .mjpeg, size: FrameSize(width: 640, height: 480)))
        // 1600 needs the 1920 frame scaled; only MJPEG has it.
        #expect(CapturePlan.choose(Self.both, maxWidth: 1600) == CapturePlan(format: .mjpeg, size: FrameSize(width: 1920, height: 1080)))
        // Scaling from a size both offer: raw YUYV avoids a JPEG decode.
        #expect(CapturePlan.choose(Self.both, maxWidth: 1000) == CapturePlan(format: .yuyv, size: FrameSize(width: 1280, height: 720)))
        #expect(CapturePlan.choose(Self.both, maxWidth: 320) == CapturePlan(format: .yuyv, size: FrameSize(width: 640, height: 480)))
        #expect(CapturePlan.choose([:], maxWidth: 320) == nil)
    }

    @Test func qualityAcceptsBothScales() {
        #expect(CameraSnapParams().jpegQuality == 90)
        #expect(CameraSnapParams(quality: 0.9).jpegQuality == 90)
        #expect(CameraSnapParams(quality: 0).jpegQuality == 1)
        #expect(CameraSnapParams(quality: 1).jpegQuality == 100)
        #expect(CameraSnapParams(quality: 55).jpegQuality == 55)
        #expect(CameraSnapParams(quality: 100).jpegQuality == 100)
    }

    @Test func mjpegWithoutHuffmanTablesIsNotStandalone() {
        let withDHT: [UInt8] = [0xFF, 0xD8, 0xFF, 0xDB, 0x00, 0x02, 0xFF, 0xC4, 0x00, 0x02, 0xFF, 0xDA, 0x00, 0x02]
        let withoutDHT: [UInt8] = [0xFF, 0xD8, 0xFF, 0xDB, 0x00, 0x02, 0xFF, 0xDA, 0x00, 0x02, 0x00, 0x00]
        #expect(MJPEGFrame.isStandalone(withDHT))
        #expect(!MJPEGFrame.isStandalone(withoutDHT))
        #expect(!MJPEGFrame.isStandalone([0x00, 0x01, 0x02, 0x03, 0x04]))
    }

    @Test func clipParamsAreChecked() throws {
        let spec = try #require(CameraCapability(config: NodeConfig()).commands.first { $0.name == "camera.clip" })
        #expect(throws: NodeError.self) { try spec.check(#"{"durationMs": 1000000000}"#) }
        do throws(NodeError) { try spec.check(#"{"durationMs": 1000000000}"#) } catch {
            #expect(error.message.contains("durationMs"))
        }
    }

    @Test func snapAndClipAreDangerousAndForegroundOnly() {
        for spec in CameraCapability(config: NodeConfig()).commands {
            #expect(spec.requiresForeground, "\(spec.name)")
            #expect(spec.dangerous == (spec.name != "camera.list"), "\(spec.name)")
        }
    }
}
