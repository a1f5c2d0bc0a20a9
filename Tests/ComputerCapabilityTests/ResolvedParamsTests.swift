@testable import ComputerCapability
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
        let act = try decode(ComputerActParams.self, ["action": "scroll"])
        #expect(act.effectiveScrollDirection == "down" && act.effectiveScrollAmount == 3 && act.effectiveRefWidth == 1280)
        #expect(act.dragDurationMs == 100 && act.holdDurationMs == 1000 && act.effectiveScreenIndex == 0)
        let apps = try decode(DeviceAppsParams.self, ["query": "  Tool "])
        #expect(apps.effectiveQuery == "tool" && apps.effectiveLimit == 100 && apps.includesSystem, "every entry unless includeSystem: false")
    }
}
