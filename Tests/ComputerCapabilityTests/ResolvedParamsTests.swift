@testable import ComputerCapability
@testable import Kit
@testable import Support
import Testing

/// Params are resolved once, from the manifest row, before the handler runs: what a handler reads
/// has its default filled in, whatever the wire left out.
struct ResolvedParamsTests {
    func decode<P: CommandParams>(_ type: P.Type, _ params: JSONValue) throws -> P {
        try P.decode(.value(params), command: P.self == ComputerActParams.self ? "computer.act" : "device.apps")
    }

    @Test func defaultsWhenTheWireSaysNothing() throws {
        let act = try decode(ComputerActParams.self, ["action": "scroll"])
        #expect(act.scrollDirection == "down" && act.scrollAmount == 3 && act.refWidth == 1280 && act.reason == "closed")
        #expect(act.dragDurationMs == 100 && act.holdDurationMs == 1000 && act.screenIndex == 0)
        let apps = try decode(DeviceAppsParams.self, ["query": "  Tool "])
        #expect(apps.normalizedQuery == "tool" && apps.limit == 100 && apps.includeSystem, "every entry unless includeSystem: false")
    }
}
