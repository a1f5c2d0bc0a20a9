import Kit
import Media

/// An open capture of one screen (an X11 monitor or screen, or a framebuffer). Owned and used by
/// one thread; it owns its connection, device and buffers and releases them when dropped.
protocol ScreenGrabber: AnyObject {
    /// Size of every frame this grabber returns.
    var width: Int { get }
    var height: Int { get }
    /// How frames are read, for logs ("XShm", "XGetImage", "fbdev").
    var method: String { get }
    /// Captures one frame and lends it to `body`. The pixels live in the grabber's memory (shared
    /// memory, the mmap'd framebuffer) and are valid only inside `body`: encode them there.
    func grab<T>(includePointer: Bool, _ body: (PixelView) throws(NodeError) -> T) throws(NodeError) -> T
    /// Gets ready to grab with the pointer shown or not, before a recording's clock starts (a
    /// screen cast opens and delivers its first frame); cheap or nothing for the others.
    func prepare(includePointer: Bool) throws(NodeError)
    /// Whether a cached grabber still captures what `screenIndex` means now (connection alive,
    /// same monitor/screen geometry, same framebuffer mode).
    func isStillValid(screenIndex: Int) -> Bool
    /// What the display is now, for displayFrameId (`X11Target.identity`, or the framebuffer's
    /// device and mode); nil when it cannot be read.
    func liveIdentity(screenIndex: Int) -> String?
    /// Starts noticing what changes on this screen, for a recording that captures only the frames
    /// that differ; nil when this grabber cannot tell (every frame is then captured).
    func watchChanges(includePointer: Bool) -> (any ScreenChangeWatch)?
}

/// What changed since the last look, for one recording on the grabber's thread.
protocol ScreenChangeWatch: AnyObject {
    /// Whether the next capture would differ from the previous one; the first call answers true.
    /// Must not miss a change: when unsure, true.
    func changedSinceLastLook() -> Bool
}

extension ScreenGrabber {
    func prepare(includePointer: Bool) throws(NodeError) {}
    func watchChanges(includePointer: Bool) -> (any ScreenChangeWatch)? { nil }
}
