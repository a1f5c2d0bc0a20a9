@testable import CameraCapability
@testable import Kit
@testable import Support
import Testing

/// Params are resolved once, in the params type: what a handler reads has its default filled in
/// (and a generated id is generated once), whatever the wire left out.
struct ResolvedParamsTests {
    func decode<P: CommandParams>(_ type: P.Type, _ params: JSONValue) throws -> P {
        try P.decodeValidated(from: .value(params))
    }

    @Test func defaultsWhenTheWireSaysNothing() throws {
        let snap = try decode(CameraSnapParams.self, [:])
        #expect(snap.effectiveMaxWidth == 1600 && snap.effectiveQuality == 90 && snap.effectiveDelayMs == 0)
        let clip = try decode(CameraClipParams.self, [:])
        #expect(clip.effectiveDurationMs == 3000 && clip.wantsAudio && !clip.audioRequested)
    }

    @Test func givenValuesWin() throws {
        let snap = try decode(CameraSnapParams.self, ["maxWidth": 320, "quality": 55, "delayMs": 200])
        #expect(snap.effectiveMaxWidth == 320 && snap.effectiveQuality == 55 && snap.effectiveDelayMs == 200)
        let clip = try decode(CameraClipParams.self, ["durationMs": 500, "includeAudio": true])
        #expect(clip.effectiveDurationMs == 500 && clip.audioRequested)
    }
}
