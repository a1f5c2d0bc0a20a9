/// Doubles into Ints without trapping: `Int(d)` ends the process when `d` is NaN, infinite or past
/// Int's range, and a peer controls many Doubles (a gateway's params, a gpsd error estimate, a
/// payload limit that a computed bitrate grows with). Every such conversion goes through these.
extension Int {
    /// `d` rounded toward zero and held to `range`; NaN becomes the range's lower bound.
    public init(clamping d: Double, to range: ClosedRange<Int>) {
        guard !d.isNaN else { self = range.lowerBound; return }
        if d <= Double(range.lowerBound) { self = range.lowerBound; return }
        // Double(upperBound) may round up past it (Int.max): compare, then convert only what fits.
        if d >= Double(range.upperBound) { self = range.upperBound; return }
        self = Int(d)
    }

    /// `d` rounded toward zero when it is finite and within `range`; nil otherwise.
    public init?(finite d: Double, in range: ClosedRange<Int>) {
        // -2^63 ≤ d < 2^63 converts; Double(Int.max) is 2^63 itself, so that bound is strict.
        guard d.isFinite, d >= -0x1p63, d < 0x1p63 else { return nil }
        let n = Int(d)
        guard range.contains(n) else { return nil }
        self = n
    }
}
