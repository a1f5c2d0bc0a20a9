import CXTest
import Kit

/// Key names of computer.act (`"ctrl+shift+t"`, `"Return"`, `"F5"`, `"1"`, `"%"`) as X keysyms.
enum KeyNames {
    static let modifiers: [String: KeySym] = [
        "ctrl": KeySym(XK_Control_L), "control": KeySym(XK_Control_L),
        "shift": KeySym(XK_Shift_L),
        "alt": KeySym(XK_Alt_L), "option": KeySym(XK_Alt_L), "menu": KeySym(XK_Alt_L), "mod1": KeySym(XK_Alt_L),
        "cmd": KeySym(XK_Super_L), "command": KeySym(XK_Super_L), "meta": KeySym(XK_Super_L), "super": KeySym(XK_Super_L),
        "win": KeySym(XK_Super_L), "windows": KeySym(XK_Super_L), "mod4": KeySym(XK_Super_L),
    ]

    static let named: [String: String] = [
        "enter": "Return", "return": "Return", "tab": "Tab", "escape": "Escape", "esc": "Escape", "space": "space",
        "backspace": "BackSpace", "delete": "Delete", "del": "Delete", "insert": "Insert", "ins": "Insert",
        "home": "Home", "end": "End", "pageup": "Prior", "pgup": "Prior", "page_up": "Prior",
        "pagedown": "Next", "pgdn": "Next", "page_down": "Next", "up": "Up", "down": "Down", "left": "Left", "right": "Right",
        "capslock": "Caps_Lock", "numlock": "Num_Lock", "printscreen": "Print", "print": "Print", "pause": "Pause",
        "plus": "plus", "minus": "minus",
    ]

    /// The keysym a character types (Latin-1 keysyms equal the code point; others are 0x01000000 + it).
    static func keysym(for c: Unicode.Scalar) -> KeySym {
        switch c.value {
        case 0x0A, 0x0D: return KeySym(XK_Return)
        case 0x09: return KeySym(XK_Tab)
        case 0x08: return KeySym(XK_BackSpace)
        case 0x1B: return KeySym(XK_Escape)
        case 0x20...0x7E, 0xA0...0xFF: return KeySym(c.value)
        default: return KeySym(0x0100_0000 + c.value)
        }
    }

    /// "ctrl+shift+t" → modifier keysyms and the key's keysym.
    static func parse(_ combo: String) throws(NodeError) -> (modifiers: [KeySym], key: KeySym?) {
        let text = combo.trimmed()
        guard !text.isEmpty else { throw NodeError.invalidRequest("keys required (e.g. \"ctrl+c\" or \"Return\")") }
        // "+" alone, or a combo ending in "+" ("ctrl++"), means the plus key.
        var parts = text.split(separator: "+", omittingEmptySubsequences: false).map(String.init)
        if text == "+" { parts = ["+"] } else if text.hasSuffix("++") { parts = Array(parts.dropLast(2)) + ["+"] }
        var mods: [KeySym] = []
        var key: KeySym?
        for (i, raw) in parts.enumerated() {
            let name = raw.trimmed()
            if let m = modifiers[name.lowercased()], i < parts.count - 1 || parts.count == 1 {
                if parts.count == 1 { key = m } else { mods.append(m) }
                continue
            }
            guard i == parts.count - 1 else {
                throw NodeError(ComputerError.unsupportedKey, "\"\(name)\" is not a modifier (ctrl, shift, alt, super) in \"\(combo)\"")
            }
            key = try keysym(named: name, in: combo)
        }
        return (mods, key)
    }

    static let maxKeysym: KeySym = 0x1FFF_FFFF

    static func keysym(named name: String, in combo: String) throws(NodeError) -> KeySym {
        let scalars = Array(name.unicodeScalars)
        if scalars.count == 1 { return keysym(for: scalars[0]) }
        if let n = named[name.lowercased()] { return XStringToKeysym(n) }
        if name.count >= 2, name.first == "f" || name.first == "F", let n = Int(name.dropFirst()), (1...35).contains(n) {
            return XStringToKeysym("F\(n)")
        }
        // XStringToKeysym reads "0x…" as any unsigned long; keysyms end at 0x1FFFFFFF (X11 protocol,
        // appendix A), and a larger one once reached an Int32 conversion that ended the daemon.
        let direct = XStringToKeysym(name)
        if direct != 0, direct <= Self.maxKeysym { return direct }
        let capitalized = XStringToKeysym(name.prefix(1).uppercased() + name.dropFirst())
        if capitalized != 0, capitalized <= Self.maxKeysym { return capitalized }
        throw NodeError(ComputerError.unsupportedKey, "unknown key \"\(name)\" in \"\(combo)\" (X keysym names such as Return, " +
                        "Escape, F5, Page_Up, or a single character)")
    }
}
