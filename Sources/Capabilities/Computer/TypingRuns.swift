/// Text for `type`, in the parts typed key by key — printable ASCII, Return, Tab and BackSpace,
/// which every keyboard layout has — and the parts pasted through the session's clipboard (GNOME's
/// RemoteDesktop clipboard, KDE's data control): the rest, which the layout may lack.
enum TypingRuns {
    enum Run: Equatable { case keys([Unicode.Scalar]), paste(String) }

    static func split(_ text: String) -> [Run] {
        var out: [Run] = []
        var keys: [Unicode.Scalar] = [], paste = ""
        for c in text.unicodeScalars {
            if (0x20...0x7E).contains(c.value) || [0x0A, 0x0D, 0x09, 0x08].contains(c.value) {
                if !paste.isEmpty { out.append(.paste(paste)); paste = "" }
                keys.append(c)
            } else {
                if !keys.isEmpty { out.append(.keys(keys)); keys = [] }
                paste.unicodeScalars.append(c)
            }
        }
        if !keys.isEmpty { out.append(.keys(keys)) }
        if !paste.isEmpty { out.append(.paste(paste)) }
        return out
    }
}
