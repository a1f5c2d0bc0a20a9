@testable import CanvasCapability
@testable import Kit
@testable import Support
import Testing

/// Params are resolved once, from the manifest row, before the handler runs: what a handler reads
/// has its default filled in, whatever the wire left out.
struct ResolvedParamsTests {
    func decode<P: CommandParams>(_ type: P.Type, _ params: JSONValue, _ command: String) throws -> P {
        try P.decode(.value(params), command: command)
    }

    @Test func defaultsWhenTheWireSaysNothing() throws {
        let canvas = try decode(CanvasSnapshotParams.self, ["format": "png"], "canvas.snapshot")
        #expect(canvas.formatName == "png" && canvas.maxWidth == 900 && canvas.jpegQuality == 82)
        let jpeg = try decode(CanvasSnapshotParams.self, ["format": "jpg"], "canvas.snapshot")
        #expect(jpeg.formatName == "jpeg" && jpeg.maxWidth == 1600)
    }
}
