import Glibc

/// Converts a stream of mono 16-bit samples from one rate to another with a windowed-sinc filter
/// (Blackman window, 16 zero crossings per side, cut off just below the lower Nyquist frequency),
/// keeping what it needs of earlier chunks, so a stream resampled in pieces equals the whole
/// resampled at once. Used where the gateway's 24 kHz realtime audio meets a device's own rate:
/// ALSA's `plug` converts linearly (aliasing that a speech recognizer or a provider's VAD hears)
/// unless alsa-plugins' speex converter is configured, which a plain Raspberry Pi OS has not.
/// Not thread-safe: one stream, one owner.
public struct AudioResampler: Sendable {
    public let inputRate: Int
    public let outputRate: Int
    /// Input samples per output sample.
    private let step: Double
    /// Filter half-width in input samples.
    private let halfWidth: Int
    /// `phases + 1` rows of `2 × halfWidth` coefficients: row p is the filter shifted by p/phases
    /// of an input sample (the last row repeats the first, one sample on, for interpolation).
    private let table: [Float]
    private static let phases = 128
    /// Input not yet consumed; `history[0]` is input sample `consumed`.
    private var history: [Float]
    /// Where the next output sample falls, in input samples from `history[0]`.
    private var position: Double

    public init(from inputRate: Int, to outputRate: Int) {
        precondition(inputRate > 0 && outputRate > 0)
        self.inputRate = inputRate; self.outputRate = outputRate
        step = Double(inputRate) / Double(outputRate)
        // Downsampling lowers the cut-off to the output's Nyquist (and widens the filter to match).
        let cutoff = 0.94 * min(1, Double(outputRate) / Double(inputRate))
        let crossings = 16.0
        halfWidth = Int((crossings / cutoff).rounded(.up))
        let width = 2 * halfWidth, phases = Self.phases
        var t = [Float](repeating: 0, count: (phases + 1) * width)
        for p in 0...phases {
            let frac = Double(p) / Double(phases)
            var sum = 0.0
            for j in 0..<width {
                // Tap j weighs input sample (floor(position) - halfWidth + 1 + j).
                let x = Double(j - halfWidth + 1) - frac
                let arg = Double.pi * cutoff * x
                let sinc = abs(x) < 1e-9 ? 1.0 : sin(arg) / arg
                let w = x / Double(halfWidth)  // -1…1 across the filter
                let window = abs(w) >= 1 ? 0 : 0.42 + 0.5 * cos(Double.pi * w) + 0.08 * cos(2 * Double.pi * w)
                let c = cutoff * sinc * window
                t[p * width + j] = Float(c)
                sum += c
            }
            // Unity gain at DC for every phase (no ripple at the frame rate).
            if sum != 0 { for j in 0..<width { t[p * width + j] = Float(Double(t[p * width + j]) / sum) } }
        }
        table = t
        // Zeros before the first sample, so output sample 0 is input sample 0.
        history = [Float](repeating: 0, count: halfWidth - 1)
        position = Double(halfWidth - 1)
    }

    /// Output samples for `input`; the last few input samples wait for the next call (about
    /// `halfWidth` of them, under 1 ms at these rates).
    public mutating func process(_ input: [Int16]) -> [Int16] {
        if inputRate == outputRate { return input }
        history.reserveCapacity(history.count + input.count)
        for s in input { history.append(Float(s)) }
        let width = 2 * halfWidth, phases = Self.phases
        var out: [Int16] = []
        out.reserveCapacity(Int(Double(input.count) / step) + 2)
        table.withUnsafeBufferPointer { tab in
            history.withUnsafeBufferPointer { h in
                while true {
                    let base = Int(position)
                    let first = base - halfWidth + 1
                    guard first + width <= h.count else { break }
                    let fracPhase = (position - Double(base)) * Double(phases)
                    let p = min(phases - 1, Int(fracPhase))
                    let mix = Float(fracPhase - Double(p))
                    var a: Float = 0, b: Float = 0
                    let rowA = p * width, rowB = rowA + width
                    for j in 0..<width {
                        let x = h[first + j]
                        a += tab[rowA + j] * x
                        b += tab[rowB + j] * x
                    }
                    let v = a + (b - a) * mix
                    out.append(Int16(clamping: Int(v.rounded())))
                    position += step
                }
            }
        }
        // Drop what no later output sample needs.
        let keepFrom = max(0, Int(position) - halfWidth + 1)
        if keepFrom > 0 {
            history.removeFirst(min(keepFrom, history.count))
            position -= Double(keepFrom)
        }
        return out
    }

    /// The samples still held back, pushed out with silence after them (end of a stream).
    public mutating func flush() -> [Int16] {
        if inputRate == outputRate { return [] }
        let pending = Int((Double(history.count) - position) / step)
        guard pending > 0 else { return [] }
        return Array(process([Int16](repeating: 0, count: 2 * halfWidth)).prefix(pending))
    }
}
