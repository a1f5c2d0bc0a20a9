import Config
import Kit
import Media

/// The screen capability's error codes (docs/PROTOCOL.md §6.2 naming).
enum ScreenError {
    /// Capture is not possible right now; the message says what to change.
    static func unavailable(_ what: String) -> NodeError { NodeError(.unavailable("screen"), what) }

    static func tooLarge(_ what: String) -> NodeError { PayloadBudget.tooLarge(what) }

    static func cancelled() -> NodeError { NodeError(.cancelled, "the screen command was cancelled") }

    static func media(_ e: MediaError) -> NodeError {
        switch e.kind {
        case .tooLarge: return tooLarge(e.description)
        case .unsupported, .codec: return unavailable(e.description)
        }
    }
}
