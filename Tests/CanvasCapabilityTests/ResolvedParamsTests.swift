@testable import CanvasCapability
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
        let canvas = try decode(CanvasSnapshotParams.self, ["format": "png"])
        #expect(canvas.effectiveFormat == "png" && canvas.effectiveMaxWidth == 900 && canvas.effectiveQuality == 82)
    }
}
