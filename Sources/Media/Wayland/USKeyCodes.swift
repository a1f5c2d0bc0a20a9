/// X keysyms as Linux key codes (linux/input-event-codes.h) on a US keyboard layout, for input
/// interfaces that take key codes, not symbols (KWin's fake input): the key, and whether Shift is
/// needed. Used by computer.act and by desktop.stream on KDE Plasma.
public enum USKeyCodes {
    public static let leftShift: UInt32 = 42

    /// The US layout's printable characters: unshifted, then shifted, per key code.
    private static let printable: [(UInt32, Character, Character)] = [
        (2, "1", "!"), (3, "2", "@"), (4, "3", "#"), (5, "4", "$"), (6, "5", "%"), (7, "6", "^"), (8, "7", "&"),
        (9, "8", "*"), (10, "9", "("), (11, "0", ")"), (12, "-", "_"), (13, "=", "+"),
        (16, "q", "Q"), (17, "w", "W"), (18, "e", "E"), (19, "r", "R"), (20, "t", "T"), (21, "y", "Y"), (22, "u", "U"),
        (23, "i", "I"), (24, "o", "O"), (25, "p", "P"), (26, "[", "{"), (27, "]", "}"),
        (30, "a", "A"), (31, "s", "S"), (32, "d", "D"), (33, "f", "F"), (34, "g", "G"), (35, "h", "H"), (36, "j", "J"),
        (37, "k", "K"), (38, "l", "L"), (39, ";", ":"), (40, "'", "\""), (41, "`", "~"), (43, "\\", "|"),
        (44, "z", "Z"), (45, "x", "X"), (46, "c", "C"), (47, "v", "V"), (48, "b", "B"), (49, "n", "N"), (50, "m", "M"),
        (51, ",", "<"), (52, ".", ">"), (53, "/", "?"), (57, " ", " "),
    ]

    /// Keys that are not characters, by X keysym (X11/keysymdef.h values).
    private static let named: [UInt32: UInt32] = [
        0xff1b: 1,   // Escape
        0xff08: 14,  // BackSpace
        0xff09: 15,  // Tab
        0xff0d: 28,  // Return
        0xff8d: 96,  // KP_Enter
        0xffe3: 29, 0xffe4: 97,  // Control_L, Control_R
        0xffe1: 42, 0xffe2: 54,  // Shift_L, Shift_R
        0xffe9: 56, 0xffea: 100, 0xffe7: 56,  // Alt_L, Alt_R, Meta_L
        0xffeb: 125, 0xffec: 126,  // Super_L, Super_R
        0xffe5: 58, 0xff7f: 69, 0xff14: 70,  // Caps_Lock, Num_Lock, Scroll_Lock
        0xff61: 99, 0xff13: 119, 0xff67: 127,  // Print, Pause, Menu
        0xff50: 102, 0xff52: 103, 0xff55: 104, 0xff51: 105, 0xff53: 106, 0xff57: 107, 0xff54: 108, 0xff56: 109,  // Home Up Prior Left Right End Down Next
        0xff63: 110, 0xffff: 111,  // Insert, Delete
        0xffbe: 59, 0xffbf: 60, 0xffc0: 61, 0xffc1: 62, 0xffc2: 63, 0xffc3: 64, 0xffc4: 65, 0xffc5: 66,  // F1–F8
        0xffc6: 67, 0xffc7: 68, 0xffc8: 87, 0xffc9: 88,  // F9–F12
    ]

    private static let characters: [UInt32: (UInt32, Bool)] = {
        var map: [UInt32: (UInt32, Bool)] = [:]
        for (code, plain, shifted) in printable {
            map[plain.unicodeScalars.first!.value] = (code, false)
            if map[shifted.unicodeScalars.first!.value] == nil { map[shifted.unicodeScalars.first!.value] = (code, true) }
        }
        return map
    }()

    /// The key for X keysym `keysym`, or nil when a US layout has none. Latin-1 keysyms equal
    /// their code points.
    public static func code(for keysym: UInt32) -> (code: UInt32, shift: Bool)? {
        if let code = named[keysym] { return (code, false) }
        if keysym >= 0x20 && keysym <= 0x7e, let k = characters[keysym] { return (k.0, k.1) }
        return nil
    }
}
