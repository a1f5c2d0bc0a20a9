import Foundation

/// When each line of a node's log holding `text` was written, in seconds since the epoch, read
/// from the line's own timestamp (`2026-12-06T21:40:00.123Z …`, the daemon's format off journald).
/// Durations a test judges come from these times, not from when the test happened to look: a busy
/// machine delays the look, not the node's clock.
func logTimes(of text: String, in log: String) -> [Double] {
    log.split(separator: "\n").filter { $0.contains(text) }.compactMap { logTime($0) }
}

/// The timestamp that starts a log line, in seconds since the epoch; nil for a line without one.
func logTime(_ line: Substring) -> Double? {
    let digits = Array(line.utf8.prefix(24))
    guard digits.count == 24, digits[10] == UInt8(ascii: "T"), digits[23] == UInt8(ascii: "Z") else { return nil }
    func number(_ range: Range<Int>) -> Int32? { Int32(String(decoding: digits[range], as: UTF8.self)) }
    guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10), let hour = number(11..<13),
          let minute = number(14..<16), let second = number(17..<19), let millis = number(20..<23) else { return nil }
    var t = tm()
    t.tm_year = year - 1900; t.tm_mon = month - 1; t.tm_mday = day
    t.tm_hour = hour; t.tm_min = minute; t.tm_sec = second
    return Double(timegm(&t)) + Double(millis) / 1000
}
