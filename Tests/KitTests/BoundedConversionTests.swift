@testable import Support
import Testing

/// Int(d) traps on NaN, ±∞ and anything past Int's range; these never do.
struct BoundedConversionTests {
    @Test func clampingHoldsEveryDoubleToTheRange() {
        let r = -100...100
        #expect(Int(clamping: .nan, to: r) == -100)
        #expect(Int(clamping: .infinity, to: r) == 100 && Int(clamping: -.infinity, to: r) == -100)
        #expect(Int(clamping: 1e300, to: r) == 100 && Int(clamping: -1e300, to: r) == -100)
        #expect(Int(clamping: 42.9, to: r) == 42 && Int(clamping: -42.9, to: r) == -42)
        // Double(Int.max) is 2^63, one past Int.max: the bound itself must not be converted.
        #expect(Int(clamping: 0x1p63, to: Int.min...Int.max) == Int.max)
        #expect(Int(clamping: -0x1p63, to: Int.min...Int.max) == Int.min)
    }

    @Test func finiteIsNilOutsideTheRange() {
        #expect(Int(finite: .nan, in: 0...10) == nil && Int(finite: .infinity, in: 0...10) == nil)
        #expect(Int(finite: 1e300, in: 0...Int.max) == nil && Int(finite: 0x1p63, in: 0...Int.max) == nil)
        #expect(Int(finite: 11, in: 0...10) == nil && Int(finite: 10.5, in: 0...10) == 10 && Int(finite: -0.5, in: 0...10) == 0)
    }
}
