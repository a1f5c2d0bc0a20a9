import Support

/// Which wake phrases the recognizer can spot: pocketsphinx's keyword search needs every word in
/// the pronunciation dictionary, so others are left out (with a reason). The dictionary file is
/// read for the phrases' words each time the phrases change (3 MB, a few ms) rather than kept in
/// memory: the gateway changes its phrases rarely, and an idle node should hold little.
enum WakePhrases {
    /// The dictionary lines (`word` or `word(2)`, and its phones) of the given lowercase words.
    static func pronunciations(of words: Set<String>, modelDir: String) -> [(word: String, phones: String)] {
        guard !words.isEmpty, let text = FileSystem.readText(modelDir + "/cmudict-en-us.dict") else { return [] }
        var out: [(String, String)] = []
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1)
            guard parts.count == 2 else { continue }
            let base = parts[0].split(separator: "(").first.map(String.init) ?? String(parts[0])
            if words.contains(base) { out.append((String(parts[0]), String(parts[1]))) }
        }
        return out
    }

    /// Splits triggers into those the dictionary can say and those it cannot.
    static func spottable(_ triggers: [String], modelDir: String) -> (usable: [String], unknown: [String]) {
        let phrases = triggers.map { t in (t, t.lowercased().split(whereSeparator: { !$0.isLetter && $0 != "'" }).joined(separator: " ")) }
        let known = Set(pronunciations(of: Set(phrases.flatMap { $0.1.split(separator: " ").map(String.init) }), modelDir: modelDir)
            .map { $0.word.split(separator: "(").first.map(String.init) ?? $0.word })
        var usable: [String] = [], unknown: [String] = []
        for (t, phrase) in phrases {
            if !phrase.isEmpty, phrase.split(separator: " ").allSatisfy({ known.contains(String($0)) }) { usable.append(phrase) }
            else { unknown.append(t) }
        }
        return (usable, unknown)
    }
}
