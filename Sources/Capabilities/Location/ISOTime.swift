import Support
import Glibc

/// ISO-8601 UTC times as gpsd writes them ("2026-11-30T04:10:41.110Z") and as the payload carries
/// them (always milliseconds, always "Z"). Hand-written with timegm/gmtime_r because the Foundation
/// formatters are not Sendable and this runs on the watch thread.
enum ISOTime {
    /// nil for anything that is not `YYYY-MM-DDTHH:MM:SS[.fff…](Z|±HH:MM)`.
    static func parse(_ text: String) -> WallTime? {
        let b = Array(text.utf8)
        func digits(_ at: Int, _ n: Int) -> Int? {
            guard at + n <= b.count else { return nil }
            var v = 0
            for i in at..<at + n {
                guard (48...57).contains(b[i]) else { return nil }
                v = v * 10 + Int(b[i] - 48)
            }
            return v
        }
        guard b.count >= 19, b[4] == 45, b[7] == 45, b[10] == 84 || b[10] == 116 || b[10] == 32, b[13] == 58, b[16] == 58,
              let year = digits(0, 4), let month = digits(5, 2), let day = digits(8, 2),
              let hour = digits(11, 2), let minute = digits(14, 2), let second = digits(17, 2),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second <= 60 else { return nil }
        var i = 19
        var fraction = 0.0
        if i < b.count, b[i] == 46 {
            i += 1
            var scale = 0.1
            let start = i
            while i < b.count, (48...57).contains(b[i]) { fraction += Double(b[i] - 48) * scale; scale /= 10; i += 1 }
            guard i > start else { return nil }
        }
        var offset = 0
        if i < b.count, b[i] == 90 || b[i] == 122 {
            i += 1
        } else if i < b.count, b[i] == 43 || b[i] == 45, let oh = digits(i + 1, 2) {
            let sign = b[i] == 43 ? 1 : -1
            var om = 0
            if i + 3 < b.count, b[i + 3] == 58, let m = digits(i + 4, 2) { om = m; i += 6 } else if let m = digits(i + 3, 2) { om = m; i += 5 } else { i += 3 }
            offset = sign * (oh * 3600 + om * 60)
        } else {
            return nil
        }
        guard i == b.count else { return nil }
        var t = tm()
        t.tm_year = Int32(year - 1900); t.tm_mon = Int32(month - 1); t.tm_mday = Int32(day)
        t.tm_hour = Int32(hour); t.tm_min = Int32(minute); t.tm_sec = Int32(second)
        let seconds = timegm(&t)
        return WallTime(timeIntervalSince1970: Double(seconds - offset) + fraction)
    }

    /// "2026-11-30T04:10:41.110Z".
    static func format(_ date: WallTime) -> String {
        let ms = (date.timeIntervalSince1970 * 1000).rounded()
        return utcTimestamp(epochMillis: Int64(ms))
    }
}
