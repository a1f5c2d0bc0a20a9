import CX11Capture
import Kit
import X11Support

/// Tells a recording whether one X11 target changed since the last look, from the server's own
/// DAMAGE extension: a damage object on the root window collects every drawn area, and each look
/// takes the collected region (resetting it) and checks it against the target's rectangle. The
/// pointer is not part of the screen's contents, so with `includePointer` a moved pointer or a new
/// cursor sprite (XFixes' cursor serial) counts as a change too. Created for one recording on the
/// grabber's connection and thread; deinit destroys the damage object.
final class X11DamageWatch: ScreenChangeWatch {
    private let connection: X11Connection
    private let target: X11Target
    private let includePointer: Bool
    private let damage: Damage
    private let notifyEvent: Int32
    private var looked = false
    private var pointer: (x: Int16, y: Int16, serial: UInt)?

    /// nil when the server has no DAMAGE extension (every frame is then captured).
    init?(connection: X11Connection, target: X11Target, includePointer: Bool) {
        let d = connection.display
        var eventBase: Int32 = 0, errorBase: Int32 = 0
        guard XDamageQueryExtension(d, &eventBase, &errorBase) != 0 else { return nil }
        var created: Damage = 0
        let error = connection.checked {
            created = XDamageCreate(d, connection.root(target.screen), Int32(XDamageReportNonEmpty))
        }
        guard error == 0, created != 0 else { return nil }
        self.connection = connection
        self.target = target
        self.includePointer = includePointer
        damage = created
        notifyEvent = eventBase + Int32(XDamageNotify)
    }

    deinit {
        guard !connection.isDead else { return }
        XDamageDestroy(connection.display, damage)
        discardNotifications()
        XSync(connection.display, 0)
    }

    /// Whether the target (or the pointer over it) changed since the previous call; the first call
    /// answers true. Reading resets the damage, so a change during the capture that follows shows
    /// up at the next look, never lost. A broken connection answers true: the capture then reports it.
    func changedSinceLastLook() -> Bool {
        guard !connection.isDead else { return true }
        let d = connection.display
        // ReportNonEmpty sends one event each time the damage becomes non-empty; the region itself
        // is what counts, so the events are only drained (they would pile up in Xlib's queue).
        discardNotifications()
        let parts = XFixesCreateRegion(d, nil, 0)
        defer { XFixesDestroyRegion(d, parts) }
        XDamageSubtract(d, damage, 0, parts)
        var count: Int32 = 0
        var drawn = false
        if let rects = XFixesFetchRegion(d, parts, &count) {
            defer { XFree(rects) }
            for i in 0..<Int(count) where overlapsTarget(rects[i]) {
                drawn = true
                break
            }
        }
        let moved = includePointer && pointerMoved()
        defer { looked = true }
        return !looked || drawn || moved || connection.isDead
    }

    private func overlapsTarget(_ r: XRectangle) -> Bool {
        let left = Int(r.x), top = Int(r.y)
        return left < target.x + target.width && left + Int(r.width) > target.x
            && top < target.y + target.height && top + Int(r.height) > target.y
    }

    /// The pointer's position or sprite differs from the last look, and it was or is over the
    /// target (a sprite reaches at most 64 px from its hotspot on common themes).
    private func pointerMoved() -> Bool {
        guard let cursor = XFixesGetCursorImage(connection.display) else { return false }
        defer { XFree(cursor) }
        let now = (x: cursor.pointee.x, y: cursor.pointee.y, serial: UInt(cursor.pointee.cursor_serial))
        defer { pointer = now }
        guard let last = pointer else { return true }
        guard last.x != now.x || last.y != now.y || last.serial != now.serial else { return false }
        return nearTarget(last.x, last.y) || nearTarget(now.x, now.y)
    }

    private func nearTarget(_ x: Int16, _ y: Int16) -> Bool {
        let margin = 64
        return Int(x) > target.x - margin && Int(x) < target.x + target.width + margin
            && Int(y) > target.y - margin && Int(y) < target.y + target.height + margin
    }

    private func discardNotifications() {
        var event = XEvent()
        while XCheckTypedEvent(connection.display, notifyEvent, &event) != 0 {}
    }
}
