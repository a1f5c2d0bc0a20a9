import CXTest
import Glibc
import Kit
import Support
import X11Support

/// One computer.act, checked and ready to run against an XTest connection: the frame check and
/// coordinate mapping happen at perform time, against the live display.
struct ComputerActPlan: Sendable {
    let p: ComputerActParams
    let action: ComputerAction
    static let defaultRefWidth = 1280

    init(_ p: ComputerActParams, action: ComputerAction) throws(NodeError) {
        self.p = p
        self.action = action
        if action.needsPoint { guard p.x != nil, p.y != nil else { throw NodeError.invalidRequest("\(action.rawValue) needs x and y") } }
        if action == .leftClickDrag { guard p.fromX != nil, p.fromY != nil else { throw NodeError.invalidRequest("left_click_drag needs fromX and fromY") } }
        if action == .type, (p.text ?? "").isEmpty { throw NodeError.invalidRequest("type needs text") }
        if action == .key || action == .holdKey, (p.keys ?? "").trimmed().isEmpty { throw NodeError.invalidRequest("\(action.rawValue) needs keys") }
    }

    /// Runs the action; returns a short description for the log (never the typed text).
    func perform(on input: XTestInput) throws(NodeError) -> String {
        let needsMapping = action.needsPoint || ((action == .scroll || action == .leftMouseDown || action == .leftMouseUp) && p.x != nil)
        var mapper: PointMapper?
        if needsMapping { mapper = try PointMapper(input: input, p: p) }
        let modifiers = try modifierKeysyms()
        switch action {
        case .leftClick, .rightClick, .middleClick, .doubleClick, .tripleClick:
            let (x, y) = try mapper!.map(p.x!, p.y!)
            input.move(to: mapper!.target, x: x, y: y)
            let button: UInt32 = action == .rightClick ? 3 : action == .middleClick ? 2 : 1
            let count = action == .doubleClick ? 2 : action == .tripleClick ? 3 : 1
            try withModifiers(modifiers, input) { input.click(button, count: count) }
            return "at \(p.x!),\(p.y!) → \(x),\(y) on \(mapper!.target.label)"
        case .mouseMove:
            let (x, y) = try mapper!.map(p.x!, p.y!)
            input.move(to: mapper!.target, x: x, y: y)
            return "to \(x),\(y) on \(mapper!.target.label)"
        case .leftClickDrag:
            let (fx, fy) = try mapper!.map(p.fromX!, p.fromY!)
            let (tx, ty) = try mapper!.map(p.x!, p.y!)
            input.move(to: mapper!.target, x: fx, y: fy)
            input.button(1, down: true)
            let steps = 12
            let pause = UInt32(max(100, p.durationMs ?? 0) * 1000 / steps)
            for i in 1...steps {
                usleep(pause)
                input.move(to: mapper!.target, x: fx + (tx - fx) * i / steps, y: fy + (ty - fy) * i / steps)
            }
            input.button(1, down: false)
            return "from \(fx),\(fy) to \(tx),\(ty) on \(mapper!.target.label)"
        case .leftMouseDown, .leftMouseUp:
            if let m = mapper { let (x, y) = try m.map(p.x!, p.y!); input.move(to: m.target, x: x, y: y) }
            if action == .leftMouseUp {
                guard input.heldButtons.contains(1) else {
                    throw NodeError.invalidRequest("left button is not held by computer control")
                }
                input.button(1, down: false)
                for k in modifiers.compactMap({ input.keycode(for: $0)?.code }) { input.key(k, down: false) }
            } else {
                for k in modifiers.compactMap({ input.keycode(for: $0)?.code }) { input.key(k, down: true) }
                input.button(1, down: true)
            }
            return ""
        case .scroll:
            if let m = mapper { let (x, y) = try m.map(p.x!, p.y!); input.move(to: m.target, x: x, y: y) }
            let direction = p.scrollDirection ?? "down"
            let button: UInt32 = ["up": 4, "down": 5, "left": 6, "right": 7][direction]!
            let amount = p.scrollAmount ?? 3
            try withModifiers(modifiers, input) { input.click(button, count: amount) }
            return "\(direction) \(amount)"
        case .type:
            let text = p.text ?? ""
            let syms = text.unicodeScalars.map { KeyNames.keysym(for: $0) }
            var i = 0
            while i < syms.count {
                // Lend keycodes for the characters ahead first, then give clients a moment to read
                // the new keymap before any of those keys arrive: a client that looks the keymap up
                // later than the key (Chromium does) would otherwise miss the character.
                var end = i, lent = false
                while end < syms.count, let k = input.keycode(for: syms[end]) { lent = lent || k.newlyMapped; end += 1 }
                guard end > i else {
                    throw NodeError(ComputerError.driverError, "cannot type U+\(text.unicodeScalars.map(\.value)[i].upperHex(4)): the keymap has no free keycode to map it to")
                }
                if lent { input.sync(); usleep(100_000) }
                for s in syms[i..<end] {
                    _ = input.tap(s)
                    usleep(3000)
                }
                i = end
                // Every spare keycode is lent out: let clients read them, give them back, go on.
                if i < syms.count { input.restoreSpares() }
            }
            input.restoreSpares()
            input.sync()
            return "\(text.count) characters"
        case .key, .holdKey:
            let combo = try KeyNames.parse(p.keys ?? "")
            guard let key = combo.key else { throw NodeError(ComputerError.unsupportedKey, "no key in \"\(p.keys ?? "")\"") }
            let mods = combo.modifiers.compactMap { input.keycode(for: $0)?.code }
            guard let k = input.keycode(for: key) else {
                throw NodeError(ComputerError.unsupportedKey, "\"\(p.keys ?? "")\" cannot be typed on this keymap")
            }
            let shift = k.shift && !combo.modifiers.contains(KeySym(XK_Shift_L)) ? input.keycode(for: KeySym(XK_Shift_L))?.code : nil
            for m in mods + [shift].compactMap({ $0 }) { input.key(m, down: true) }
            input.key(k.code, down: true)
            if action == .holdKey { usleep(UInt32(min(p.durationMs ?? 1000, 10_000)) * 1000) }
            input.key(k.code, down: false)
            for m in (mods + [shift].compactMap({ $0 })).reversed() { input.key(m, down: false) }
            input.restoreSpares()
            input.sync()
            return p.keys ?? ""
        case .closeExecution:
            return ""
        }
    }

    private func modifierKeysyms() throws(NodeError) -> [KeySym] {
        guard let text = p.modifiers?.trimmed(), !text.isEmpty else { return [] }
        var out: [KeySym] = []
        for name in text.split(separator: "+").map({ $0.trimmed().lowercased() }) {
            guard let m = KeyNames.modifiers[name] else {
                throw NodeError(ComputerError.unsupportedKey, "unknown modifier \"\(name)\" (ctrl, shift, alt, super)")
            }
            out.append(m)
        }
        return out
    }

    private func withModifiers(_ mods: [KeySym], _ input: XTestInput, _ body: () -> Void) throws(NodeError) {
        var pressed: [KeyCode] = []
        for m in mods {
            guard let k = input.keycode(for: m) else { throw NodeError(ComputerError.unsupportedKey, "the keymap has no key for a modifier") }
            input.key(k.code, down: true)
            pressed.append(k.code)
        }
        body()
        for k in pressed.reversed() { input.key(k, down: false) }
        input.sync()
    }
}

/// Screenshot pixels → the monitor's pixels: the frame must be the live display's, then one
/// uniform factor (monitor width / delivered width), clamped inside the monitor.
struct PointMapper {
    let target: X11Target
    let frame: DisplayFrame

    init(input: XTestInput, p: ComputerActParams) throws(NodeError) {
        guard let id = p.displayFrameId else { throw ComputerError.stale("displayFrameId is required for coordinate input") }
        guard let frame = DisplayFrame(id: id) else { throw ComputerError.stale("displayFrameId \"\(id)\" was not issued by this node") }
        let target = try X11Targets.target(p.screenIndex ?? 0, on: input.display, name: input.name)
        guard frame.matches(identity: target.identity(display: input.name), referenceWidth: p.refWidth ?? ComputerActPlan.defaultRefWidth) else {
            throw ComputerError.stale("display identity, geometry, or reference width changed since the screenshot")
        }
        self.target = target
        self.frame = frame
    }

    func map(_ x: Int, _ y: Int) throws(NodeError) -> (Int, Int) {
        guard x < frame.deliveredWidth, y < frame.deliveredHeight else {
            throw NodeError.invalidRequest("coordinate \(x),\(y) is outside the captured screen (\(frame.deliveredWidth)x\(frame.deliveredHeight))")
        }
        let scale = Double(target.width) / Double(frame.deliveredWidth)
        let nx = min(target.width - 1, Int((Double(x) * scale).rounded()))
        let ny = min(target.height - 1, Int((Double(y) * scale).rounded()))
        return (nx, ny)
    }
}
