/// The `quality` parameter of snapshot commands: a fraction 0...1 (iOS, Android) or a percentage
/// above 1 (Windows), as the TurboJPEG 1...100 the encoders take.
public enum JPEGQuality {
    /// `minimumFraction` is the floor for fractions (the iOS screen snapshot clamps to 0.05).
    public static func percent(_ q: Double, minimumFraction: Double = 0.01) -> Int {
        if q <= 1 { return min(100, Int((max(minimumFraction, q) * 100).rounded())) }
        return min(100, Int(q.rounded()))
    }
}
