/// H.264 NAL units in an Annex B byte stream (start codes, what libx264 and the V4L2 encoders
/// hand out), and the emulation prevention that keeps a start code from appearing inside one.
enum H264NALUnits {
    /// The NAL units of an Annex B buffer, each without its start code (header byte first).
    static func split(annexB data: [UInt8]) -> [ArraySlice<UInt8>] {
        var units: [ArraySlice<UInt8>] = []
        var start: Int? = nil
        var i = 0
        while i + 2 < data.count {
            if data[i] == 0, data[i + 1] == 0, data[i + 2] == 1 {
                if let s = start { units.append(data[s..<trimmingZeros(data, end: i, from: s)]) }
                i += 3
                start = i
            } else {
                i += 1
            }
        }
        if let s = start, s < data.count { units.append(data[s..<data.count]) }
        return units
    }

    /// A four-byte start code before each unit.
    static func join(_ units: [[UInt8]]) -> [UInt8] {
        var out: [UInt8] = []
        for u in units { out += [0, 0, 0, 1]; out += u }
        return out
    }

    /// The RBSP of a NAL unit's payload: every 00 00 03 loses its 03.
    static func unescape(_ payload: some Collection<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(payload.count)
        var zeros = 0
        for b in payload {
            if zeros >= 2 && b == 3 { zeros = 0; continue }
            zeros = b == 0 ? zeros + 1 : 0
            out.append(b)
        }
        return out
    }

    /// The payload for an RBSP: a 03 after any two zero bytes that precede a byte ≤ 03.
    static func escape(_ rbsp: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(rbsp.count + rbsp.count / 64)
        var zeros = 0
        for b in rbsp {
            if zeros >= 2 && b <= 3 { out.append(3); zeros = 0 }
            zeros = b == 0 ? zeros + 1 : 0
            out.append(b)
        }
        return out
    }

    /// A four-byte start code's leading zero belongs to the start code, not to the unit before.
    private static func trimmingZeros(_ data: [UInt8], end: Int, from start: Int) -> Int {
        var e = end
        while e > start, data[e - 1] == 0 { e -= 1 }
        return e
    }
}
