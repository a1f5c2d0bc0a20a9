import CXTest
import Glibc
import Kit
import Support

/// A screen computer.act can aim at: what screen.snapshot's displayFrameId was derived from, its
/// size in pixels, and the backend's own handle for it.
struct InputTarget {
    let identity: String
    let width: Int
    let height: Int
    let label: String
    /// XTest: the X11 target; Wayland: the index among the compositor's outputs.
    let handle: Any
}

/// What computer.act needs from an input backend: XTest on an X11 display, or the virtual pointer
/// and keyboard of a wlroots compositor. One action at a time, under `lock`.
/// Not Sendable: an input is a display connection, reached only through the `Locked` that holds
/// it (ComputerCapability), so one thread at a time uses it.
protocol ComputerInput: AnyObject {
    /// What delivers the input, for doctor ("XTest on the X display :0").
    var backendName: String { get }
    /// The screen `screenIndex`, as it is now.
    func target(screenIndex: Int) throws(NodeError) -> InputTarget
    /// Moves the pointer to (x, y) in the target's pixels.
    func move(to target: InputTarget, x: Int, y: Int) throws(NodeError)
    /// Buttons 1 left, 2 middle, 3 right.
    func button(_ b: UInt32, down: Bool)
    var heldButtons: [UInt32] { get }
    /// `amount` notches up, down, left or right.
    func scroll(_ direction: String, amount: Int, stop: CancelFlag)
    /// Holds the modifier keys down (true) or lets them go.
    func modifiers(_ mods: [KeySym], down: Bool) throws(NodeError)
    /// Types the text, any Unicode, as key presses.
    /// Stops between keys once `stop` is raised (a cancel, a disconnect, shutdown).
    func type(_ text: String, stop: CancelFlag) throws(NodeError)
    /// One key with modifiers, held down while `hold` runs (hold_key), then released.
    func combo(_ mods: [KeySym], key: KeySym, hold: (() -> Void)?) throws(NodeError)
    /// Releases every key and button held down (end of an execution, shutdown).
    func releaseAll()
    func sync()
}

extension ComputerInput {
    func click(_ b: UInt32, count: Int, stop: CancelFlag) {
        for i in 0..<count {
            button(b, down: true)
            button(b, down: false)
            // Pacing inside every toolkit's double-click time; a raise ends the clicks.
            if i < count - 1, !stop.sleep(milliseconds: 40) { return }
        }
    }
}
