import Glibc

/// The few printf-style renderings the node needs, without Foundation's String(format:).
extension BinaryInteger {
    /// Decimal, left-padded with zeros to `width` digits ("%0Nd").
    public func zeroPadded(_ width: Int) -> String { padded(String(self), width) }
    /// Octal, padded to `width` digits ("%0No"): file modes.
    public func octal(_ width: Int = 4) -> String { padded(String(self, radix: 8), width) }
    /// Lowercase hex, padded to `width` digits ("%0Nx").
    public func hex(_ width: Int = 2) -> String { padded(String(self, radix: 16), width) }
    /// Uppercase hex, padded to `width` digits ("%0NX").
    public func upperHex(_ width: Int = 2) -> String { padded(String(self, radix: 16, uppercase: true), width) }
}

private func padded(_ digits: String, _ width: Int) -> String {
    let negative = digits.hasPrefix("-")
    let body = negative ? String(digits.dropFirst()) : digits
    return (negative ? "-" : "") + String(repeating: "0", count: max(0, width - body.count)) + body
}

extension Double {
    /// Fixed-point with `digits` decimals, rounded half away from zero ("%.Nf" for log lines).
    public func fixed(_ digits: Int) -> String {
        guard isFinite else { return String(self) }
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let scaled = (abs(self) * scale).rounded()
        let whole = (scaled / scale).rounded(.down)
        let frac = Int64(scaled - whole * scale)
        let sign = self < 0 && scaled != 0 ? "-" : ""
        let head = sign + String(Int64(whole))
        return digits == 0 ? head : head + "." + frac.zeroPadded(digits)
    }
}

/// "2026-11-30T04:10:41.110Z": UTC, always milliseconds and "Z" (log lines, location payloads).
public func utcTimestamp(epochMillis: Int64) -> String {
    var secs = time_t(epochMillis >= 0 ? epochMillis / 1000 : (epochMillis - 999) / 1000)
    let millis = Int(epochMillis - Int64(secs) * 1000)
    var t = tm()
    gmtime_r(&secs, &t)
    return "\((Int(t.tm_year) + 1900).zeroPadded(4))-\((Int(t.tm_mon) + 1).zeroPadded(2))-\(t.tm_mday.zeroPadded(2))T"
        + "\(t.tm_hour.zeroPadded(2)):\(t.tm_min.zeroPadded(2)):\(t.tm_sec.zeroPadded(2)).\(millis.zeroPadded(3))Z"
}

extension StringProtocol {
    /// Right-padded with spaces to `width` characters, or cut to it (column output).
    public func padded(to width: Int) -> String {
        count >= width ? String(prefix(width)) : String(self) + String(repeating: " ", count: width - count)
    }

    /// Without leading and trailing whitespace and newlines (and NULs, which sysfs files end with).
    public func trimmed() -> String {
        let isSpace: (Character) -> Bool = { $0.isWhitespace || $0 == "\0" }
        guard let first = firstIndex(where: { !isSpace($0) }) else { return "" }
        let last = lastIndex(where: { !isSpace($0) })!
        return String(self[first...last])
    }

    /// Without these characters at either end.
    public func trimming(_ set: Set<Character>) -> String {
        guard let first = firstIndex(where: { !set.contains($0) }) else { return "" }
        let last = lastIndex(where: { !set.contains($0) })!
        return String(self[first...last])
    }
}
