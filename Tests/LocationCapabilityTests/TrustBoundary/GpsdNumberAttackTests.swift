@testable import Kit
@testable import LocationCapability
@testable import Support
import Testing

/// gpsd's error estimates are numbers a broken receiver or a hostile gpsd controls: 1e300 once
/// reached an Int conversion when location.get timed out. Past 10,000 km they mean "unknown".
struct GpsdNumberAttackTests {
    @Test func absurdErrorEstimatesAreUnknown() {
        for line in [#"{"class":"TPV","mode":2,"lat":1,"lon":2,"eph":1e300}"#,
                     #"{"class":"TPV","mode":2,"lat":1,"lon":2,"epx":1e200,"epy":1e200}"#,
                     #"{"class":"TPV","mode":3,"lat":1,"lon":2,"alt":5,"eph":1e8}"#] {
            guard case .tpv(let t)? = GpsdMessage.parse(line) else { Issue.record("\(line) not read"); continue }
            #expect(t.eph == nil && t.epx == nil && t.epy == nil, "\(line)")
        }
        guard case .tpv(let t)? = GpsdMessage.parse(#"{"class":"TPV","mode":2,"lat":1,"lon":2,"eph":12.5}"#) else { Issue.record("no TPV"); return }
        #expect(t.eph == 12.5)
    }
}
