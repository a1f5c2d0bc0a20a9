import CXTest
import Glibc
import Kit
import Support
import X11Support

/// One computer.act, checked and ready to run against an input backend (XTest, or a Wayland
/// compositor's virtual pointer and keyboard): the frame check and coordinate mapping happen at
/// perform time, against the live display.
struct ComputerActPlan: Sendable {
    let p: ComputerActParams
    let action: ComputerAction

    init(_ p: ComputerActParams, action: ComputerAction) throws(NodeError) {
        self.p = p
        self.action = action
        if action.needsPoint { guard p.x != nil, p.y != nil else { throw NodeError.invalidRequest("\(action.rawValue) needs x and y") } }
        if action == .leftClickDrag { guard p.fromX != nil, p.fromY != nil else { throw NodeError.invalidRequest("left_click_drag needs fromX and fromY") } }
        if action == .type, p.typedText.isEmpty { throw NodeError.invalidRequest("type needs text") }
        if action == .key || action == .holdKey, p.keyCombo.trimmed().isEmpty { throw NodeError.invalidRequest("\(action.rawValue) needs keys") }
    }

    /// Runs the action; returns a short description for the log (never the typed text). Holds
    /// and drag pauses wait on `stop`, so a cancel, a disconnect or the daemon's shutdown ends
    /// them at once — and what was pressed is released on the way out.
    func perform(on input: any ComputerInput, stop: CancelFlag) throws(NodeError) -> String {
        let needsMapping = action.needsPoint || ((action == .scroll || action == .leftMouseDown || action == .leftMouseUp) && p.x != nil)
        var mapper: PointMapper?
        if needsMapping { mapper = try PointMapper(input: input, p: p) }
        let modifiers = try modifierKeysyms()
        switch action {
        case .leftClick, .rightClick, .middleClick, .doubleClick, .tripleClick:
            let (x, y) = try mapper!.map(p.x!, p.y!)
            try input.move(to: mapper!.target, x: x, y: y)
            let button: UInt32 = action == .rightClick ? 3 : action == .middleClick ? 2 : 1
            let count = action == .doubleClick ? 2 : action == .tripleClick ? 3 : 1
            try withModifiers(modifiers, input) { input.click(button, count: count, stop: stop) }
            return "at \(p.x!),\(p.y!) → \(x),\(y) on \(mapper!.target.label)"
        case .mouseMove:
            let (x, y) = try mapper!.map(p.x!, p.y!)
            try input.move(to: mapper!.target, x: x, y: y)
            return "to \(x),\(y) on \(mapper!.target.label)"
        case .leftClickDrag:
            let (fx, fy) = try mapper!.map(p.fromX!, p.fromY!)
            let (tx, ty) = try mapper!.map(p.x!, p.y!)
            try input.move(to: mapper!.target, x: fx, y: fy)
            input.button(1, down: true)
            let steps = 12
            let pause = UInt32(p.dragDurationMs * 1000 / steps)
            for i in 1...steps {
                guard stop.sleep(milliseconds: Int(pause / 1000)) else { break }
                try input.move(to: mapper!.target, x: fx + (tx - fx) * i / steps, y: fy + (ty - fy) * i / steps)
            }
            input.button(1, down: false)
            return "from \(fx),\(fy) to \(tx),\(ty) on \(mapper!.target.label)"
        case .leftMouseDown, .leftMouseUp:
            if let m = mapper, let px = p.x, let py = p.y { let (x, y) = try m.map(px, py); try input.move(to: m.target, x: x, y: y) }
            if action == .leftMouseUp {
                guard input.heldButtons.contains(1) else {
                    throw NodeError.invalidRequest("left button is not held by computer control")
                }
                input.button(1, down: false)
                try input.modifiers(modifiers, down: false)
            } else {
                try input.modifiers(modifiers, down: true)
                input.button(1, down: true)
            }
            return ""
        case .scroll:
            if let m = mapper, let px = p.x, let py = p.y { let (x, y) = try m.map(px, py); try input.move(to: m.target, x: x, y: y) }
            let direction = p.scrollDirection
            let amount = p.scrollAmount
            try withModifiers(modifiers, input) { input.scroll(direction, amount: amount, stop: stop) }
            return "\(direction) \(amount)"
        case .type:
            let text = p.typedText
            try input.type(text, stop: stop)
            return "\(text.count) characters"
        case .key, .holdKey:
            let combo = try KeyNames.parse(p.keyCombo)
            guard let key = combo.key else { throw NodeError(ComputerError.unsupportedKey, "no key in \"\(p.keyCombo)\"") }
            let holdMs = p.holdDurationMs
            var interrupted = false
            try input.combo(combo.modifiers, key: key, hold: action == .holdKey ? { interrupted = !stop.sleep(milliseconds: holdMs) } : nil)
            if interrupted { throw NodeError(.cancelled, "hold_key was interrupted; the keys were released") }
            return p.keyCombo
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

    private func withModifiers(_ mods: [KeySym], _ input: any ComputerInput, _ body: () -> Void) throws(NodeError) {
        try input.modifiers(mods, down: true)
        body()
        try input.modifiers(mods, down: false)
        input.sync()
    }
}

/// Screenshot pixels → the monitor's pixels: the frame must be the live display's, then one
/// uniform factor (monitor width / delivered width), clamped inside the monitor.
struct PointMapper {
    let target: InputTarget
    let frame: DisplayFrame

    init(input: any ComputerInput, p: ComputerActParams) throws(NodeError) {
        guard let id = p.displayFrameId else { throw ComputerError.stale("displayFrameId is required for coordinate input") }
        guard let frame = DisplayFrame(id: id) else { throw ComputerError.stale("displayFrameId \"\(id)\" was not issued by this node") }
        let target = try input.target(screenIndex: p.screenIndex)
        guard frame.matches(identity: target.identity, referenceWidth: p.refWidth) else {
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
