import CPocketSphinx
import FoundationEssentials
import Glibc
import Kit
import Support

/// Which wake phrases the recognizer can spot: pocketsphinx's keyword search needs every word in
/// the pronunciation dictionary, so others are left out (with a reason).
enum WakePhrases {
    /// Words the dictionary can pronounce (loaded once per model directory).
    private static let lock = Lock()
    nonisolated(unsafe) private static var words: (dir: String, set: Set<String>)?

    static func knownWords(_ modelDir: String) -> Set<String> {
        lock.withLock {
            if let w = words, w.dir == modelDir { return w.set }
            var set = Set<String>()
            if let text = try? String(contentsOfFile: modelDir + "/cmudict-en-us.dict", encoding: .utf8) {
                for line in text.split(separator: "\n") {
                    guard let word = line.split(separator: " ", maxSplits: 1).first else { continue }
                    set.insert(String(word.split(separator: "(").first ?? word))
                }
            }
            words = (modelDir, set)
            return set
        }
    }

    /// Splits triggers into those the dictionary can say and those it cannot.
    static func spottable(_ triggers: [String], modelDir: String) -> (usable: [String], unknown: [String]) {
        let known = knownWords(modelDir)
        var usable: [String] = [], unknown: [String] = []
        for t in triggers {
            let phrase = t.lowercased().split(whereSeparator: { !$0.isLetter && $0 != "'" }).joined(separator: " ")
            if !phrase.isEmpty, phrase.split(separator: " ").allSatisfy({ known.contains(String($0)) }) { usable.append(phrase) }
            else { unknown.append(t) }
        }
        return (usable, unknown)
    }
}
