import Config
import Kit
import Glibc
import Support

/// The last update check (`openclaw-node update`), kept in the state directory for `status`.
public struct UpdateCheck: Sendable {
    public static let fileName = "update-check.json"
    public let atMs: Int64
    public let result: String

    public static func read(stateDir: String) -> UpdateCheck? {
        guard let v = FileSystem.readBytes(stateDir + "/" + fileName).flatMap(JSONValue.parse),
              let at = v["atMs"]?.doubleValue, let result = v["result"]?.stringValue else { return nil }
        return UpdateCheck(atMs: Int64(at), result: result)
    }

    /// Records a check (owned by the state directory's owner when written by root for the service).
    public static func record(_ result: String, stateDir: String) {
        let file = stateDir + "/" + fileName
        let v: JSONValue = ["atMs": .number(Double(WallClock.milliseconds)), "result": .string(result)]
        guard (try? FileSystem.write(v.jsonBytes, to: file, mode: 0o644)) != nil else { return }
        FileSystem.matchOwner(file, of: stateDir)
    }

    /// Whether `now` (minutes since local midnight) is inside "HH:MM-HH:MM" (which may pass
    /// midnight); nil when the text is not such a window.
    public static func inWindow(_ window: String, minute now: Int) -> Bool? {
        let parts = window.split(separator: "-").map { $0.trimmed() }
        func minutes(_ s: String) -> Int? {
            let hm = s.split(separator: ":")
            guard hm.count == 2, let h = Int(hm[0]), let m = Int(hm[1]), (0...24).contains(h), (0...59).contains(m), h * 60 + m <= 1440 else { return nil }
            return h * 60 + m
        }
        guard parts.count == 2, let start = minutes(parts[0]), let end = minutes(parts[1]) else { return nil }
        if start == end { return true }
        return start < end ? (start <= now && now < end) : (now >= start || now < end)
    }

    /// Minutes since local midnight.
    public static var localMinute: Int {
        var t = time(nil)
        var parts = tm()
        localtime_r(&t, &parts)
        return Int(parts.tm_hour) * 60 + Int(parts.tm_min)
    }

    /// For the metrics endpoint: when the last check ran and whether it worked (none: no series).
    public static func metrics(stateDir: String) -> [MetricFamily] {
        guard let c = read(stateDir: stateDir) else { return [] }
        return [
            MetricFamily("update_last_check_timestamp_seconds", .gauge, "When openclaw-node update last checked for a new version.",
                         value: Double(c.atMs) / 1000),
            MetricFamily("update_last_check_success", .gauge, "1 when the last update check worked (up to date or upgraded).",
                         value: c.result.hasPrefix("failed") ? 0 : 1),
        ]
    }
}
