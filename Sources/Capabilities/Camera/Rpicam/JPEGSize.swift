/// A JPEG's width and height from its frame header (SOF0–SOF15 but DHT, JPG and DAC), without
/// decoding it; nil when the bytes are not a JPEG that has one.
enum JPEGSize {
    static func of(_ jpeg: [UInt8]) -> (width: Int, height: Int)? {
        guard jpeg.count > 4, jpeg[0] == 0xFF, jpeg[1] == 0xD8 else { return nil }
        var i = 2
        while i + 9 < jpeg.count {
            guard jpeg[i] == 0xFF else { return nil }
            let marker = jpeg[i + 1]
            if marker == 0xFF { i += 1; continue }  // fill byte
            let length = Int(jpeg[i + 2]) << 8 | Int(jpeg[i + 3])
            if (0xC0...0xCF).contains(marker), ![0xC4, 0xC8, 0xCC].contains(marker) {
                let h = Int(jpeg[i + 5]) << 8 | Int(jpeg[i + 6]), w = Int(jpeg[i + 7]) << 8 | Int(jpeg[i + 8])
                return w > 0 && h > 0 ? (w, h) : nil
            }
            guard length >= 2 else { return nil }
            i += 2 + length
        }
        return nil
    }
}
