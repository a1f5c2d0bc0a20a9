import CXTest
import Kit

/// X keysyms as Linux key codes (linux/input-event-codes.h) on a US keyboard layout, for input
/// that takes key codes, not symbols (KWin's fake input): the key, and whether Shift is needed.
enum KdeKeyCodes {
    static let leftShift: UInt32 = 42

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

    /// Keys that are not characters, by keysym.
    private static let named: [Int32: UInt32] = [
        XK_Escape: 1, XK_BackSpace: 14, XK_Tab: 15, XK_Return: 28, XK_KP_Enter: 96, XK_Control_L: 29, XK_Control_R: 97,
        XK_Shift_L: 42, XK_Shift_R: 54, XK_Alt_L: 56, XK_Alt_R: 100, XK_Meta_L: 56, XK_Super_L: 125, XK_Super_R: 126,
        XK_Caps_Lock: 58, XK_Num_Lock: 69, XK_Scroll_Lock: 70, XK_Print: 99, XK_Pause: 119, XK_Menu: 127,
        XK_Home: 102, XK_Up: 103, XK_Prior: 104, XK_Left: 105, XK_Right: 106, XK_End: 107, XK_Down: 108, XK_Next: 109,
        XK_Insert: 110, XK_Delete: 111,
        XK_F1: 59, XK_F2: 60, XK_F3: 61, XK_F4: 62, XK_F5: 63, XK_F6: 64, XK_F7: 65, XK_F8: 66, XK_F9: 67, XK_F10: 68,
        XK_F11: 87, XK_F12: 88,
    ]

    private static let characters: [UInt32: (UInt32, Bool)] = {
        var map: [UInt32: (UInt32, Bool)] = [:]
        for (code, plain, shifted) in printable {
            map[plain.unicodeScalars.first!.value] = (code, false)
            if map[shifted.unicodeScalars.first!.value] == nil { map[shifted.unicodeScalars.first!.value] = (code, true) }
        }
        return map
    }()

    /// The key for `keysym`, or nil when a US layout has none.
    static func code(for keysym: KeySym) -> (code: UInt32, shift: Bool)? {
        if let sym = Int32(exactly: keysym), let code = named[sym] { return (code, false) }
        // Latin-1 keysyms equal their code points (KeyNames.keysym(for:)).
        if keysym >= 0x20 && keysym <= 0x7e, let k = characters[UInt32(keysym)] { return (k.0, k.1) }
        return nil
    }
}
