import Foundation
@testable import Media
import Testing

/// The resampler between devices' rates and realtime talk's 24 kHz: speech-band tones keep their
/// level and frequency, what the lower rate cannot hold is filtered out instead of folding back
/// into the speech band (as ALSA's linear `plug` converter lets it), and a stream resampled in
/// pieces equals the whole.
@Suite struct AudioResamplerTests {
    static func tone(_ hz: Double, rate: Int, seconds: Double, amplitude: Double = 10_000) -> [Int16] {
        (0..<Int(Double(rate) * seconds)).map { Int16(amplitude * sin(2 * Double.pi * hz * Double($0) / Double(rate))) }
    }

    static func rms(_ s: ArraySlice<Int16>) -> Double {
        (s.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(1, s.count))).squareRoot()
    }

    /// The level of `hz` in `s` (a single-bin DFT).
    static func level(_ s: ArraySlice<Int16>, hz: Double, rate: Int) -> Double {
        var re = 0.0, im = 0.0
        for (i, v) in s.enumerated() {
            let a = 2 * Double.pi * hz * Double(i) / Double(rate)
            re += Double(v) * cos(a); im += Double(v) * sin(a)
        }
        return 2 * (re * re + im * im).squareRoot() / Double(s.count)
    }

    @Test(arguments: [(48_000, 24_000), (44_100, 24_000), (16_000, 24_000), (24_000, 48_000), (24_000, 44_100)])
    func speechBandTonesPassAtTheirLevel(_ rates: (Int, Int)) {
        var r = AudioResampler(from: rates.0, to: rates.1)
        let out = r.process(Self.tone(1_000, rate: rates.0, seconds: 1))
        #expect(abs(out.count - rates.1) <= 64, "\(out.count) samples for 1 s")
        let middle = out[out.count / 4..<out.count * 3 / 4]
        let at1k = Self.level(middle, hz: 1_000, rate: rates.1)
        #expect(abs(at1k - 10_000) < 150, "1 kHz at \(at1k), sent at 10000")
    }

    @Test func whatTheLowerRateCannotHoldIsFilteredNotFolded() {
        // 15 kHz at 48 kHz would fold to 9 kHz at 24 kHz.
        var r = AudioResampler(from: 48_000, to: 24_000)
        let out = r.process(Self.tone(15_000, rate: 48_000, seconds: 1))
        let folded = Self.level(out[6_000..<18_000], hz: 9_000, rate: 24_000)
        #expect(folded < 10_000 / 300, "folded at \(folded): under -50 dB")
    }

    @Test func piecesEqualTheWhole() {
        let input = Self.tone(440, rate: 48_000, seconds: 0.5) + Self.tone(3_000, rate: 48_000, seconds: 0.5)
        var whole = AudioResampler(from: 48_000, to: 24_000)
        let all = whole.process(input) + whole.flush()
        var pieces = AudioResampler(from: 48_000, to: 24_000)
        var out: [Int16] = []
        var i = 0, n = 1
        while i < input.count { let end = min(input.count, i + n); out += pieces.process(Array(input[i..<end])); i = end; n = n % 997 + 13 }
        out += pieces.flush()
        #expect(out == all)
        #expect(abs(out.count - input.count / 2) <= 1, "\(out.count)")
    }
}
