/// Tells a recording whether GNOME's screen cast changed since the last look: Mutter sends a
/// frame only when the monitor (or, with the pointer embedded, the pointer) changed, so a new
/// frame number is a change and the same number is a still screen.
final class GnomeFrameWatch: ScreenChangeWatch {
    /// The cast in use (a reopened cast starts numbering again) and its latest frame number.
    private let current: () -> (cast: ObjectIdentifier, frame: UInt64)?
    private var seen: (cast: ObjectIdentifier, frame: UInt64)?

    init(current: @escaping () -> (cast: ObjectIdentifier, frame: UInt64)?) {
        self.current = current
    }

    func changedSinceLastLook() -> Bool {
        guard let now = current() else { return true }
        defer { seen = now }
        guard let seen else { return true }
        return seen.cast != now.cast || seen.frame != now.frame
    }
}
