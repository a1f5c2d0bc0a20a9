@testable import CameraCapability
@testable import CanvasCapability
@testable import ComputerCapability
@testable import Kit
@testable import Support
@testable import SystemCapability
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
        let canvas = try decode(CanvasSnapshotParams.self, ["format": "png"])
        #expect(canvas.effectiveFormat == "png" && canvas.effectiveMaxWidth == 900 && canvas.effectiveQuality == 82)
        let act = try decode(ComputerActParams.self, ["action": "scroll"])
        #expect(act.effectiveScrollDirection == "down" && act.effectiveScrollAmount == 3 && act.effectiveRefWidth == 1280)
        #expect(act.dragDurationMs == 100 && act.holdDurationMs == 1000 && act.effectiveScreenIndex == 0)
        let apps = try decode(DeviceAppsParams.self, ["query": "  Tool "])
        #expect(apps.effectiveQuery == "tool" && apps.effectiveLimit == 100 && !apps.includesSystem)
    }

    @Test func givenValuesWin() throws {
        let snap = try decode(CameraSnapParams.self, ["maxWidth": 320, "quality": 55, "delayMs": 200])
        #expect(snap.effectiveMaxWidth == 320 && snap.effectiveQuality == 55 && snap.effectiveDelayMs == 200)
        let clip = try decode(CameraClipParams.self, ["durationMs": 500, "includeAudio": true])
        #expect(clip.effectiveDurationMs == 500 && clip.audioRequested)
    }

    @Test func aRunIdIsMadeOnceWhenTheGatewaySendsNone() throws {
        let run = try decode(SystemRunParams.self, ["command": ["true"]])
        #expect(!run.effectiveRunId.isEmpty && run.effectiveRunId == run.effectiveRunId)
        #expect(run.effectiveSessionKey == "node" && run.effectiveAgent == "main" && run.programTimeout == nil)
        let named = try decode(SystemRunParams.self, ["command": ["true"], "runId": "r1", "timeoutMs": 50])
        #expect(named.effectiveRunId == "r1" && named.programTimeout == .milliseconds(50))
        // The resolved field is not a wire field.
        #expect(throws: NodeError.self) { try decode(SystemRunParams.self, ["command": []]) }
    }
}
