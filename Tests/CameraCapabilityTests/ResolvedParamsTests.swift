@testable import CameraCapability
import Config
@testable import Kit
@testable import Support
import Testing

/// Params are resolved once, from the manifest row, before the handler runs: what a handler reads
/// has its default filled in, whatever the wire left out.
struct ResolvedParamsTests {
    func decode<P: CommandParams>(_ type: P.Type, _ params: JSONValue) throws -> P {
        let command = P.self == CameraSnapParams.self ? "camera.snap" : "camera.clip"
        guard let row = BundleCatalog.current.named("camera")?.commands.first(where: { $0.name == command }) else {
            Issue.record("no camera manifest beside the tests: run scripts/build"); throw NodeError.invalidRequest("no manifest")
        }
        return try P.decode(.value(params), row: row)
    }

    @Test func defaultsWhenTheWireSaysNothing() throws {
        let snap = try decode(CameraSnapParams.self, [:])
        #expect(snap.maxWidth == 1600 && snap.jpegQuality == 90 && snap.delayMs == 0)
        let clip = try decode(CameraClipParams.self, [:])
        #expect(clip.durationMs == 3000 && clip.wantsAudio && !clip.audioRequested)
    }

    @Test func givenValuesWin() throws {
        let snap = try decode(CameraSnapParams.self, ["maxWidth": 320, "quality": 55, "delayMs": 200])
        #expect(snap.maxWidth == 320 && snap.jpegQuality == 55 && snap.delayMs == 200)
        let clip = try decode(CameraClipParams.self, ["durationMs": 500, "includeAudio": true])
        #expect(clip.durationMs == 500 && clip.audioRequested)
    }
}
