/// "Did you mean" by edit distance (case-insensitive), only when the guess is close.
public enum Suggest {
    public static func closest(to word: String, in candidates: [String]) -> String? {
        let w = Array(word.lowercased())
        let allowed = max(2, w.count / 3)
        var best: (String, Int)?
        for c in candidates {
            // The distance is at least the length difference: skip the O(n·m) table when that alone
            // rules a candidate out (a 5 MB key took seconds to check).
            guard abs(w.count - c.count) <= allowed else { continue }
            let d = distance(w, Array(c.lowercased()))
            if d <= allowed, best == nil || d < best!.1 { best = (c, d) }
        }
        return best?.0
    }

    static func distance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var prev = Array(0...b.count)
        for i in 1...a.count {
            var cur = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            prev = cur
        }
        return prev[b.count]
    }
}
