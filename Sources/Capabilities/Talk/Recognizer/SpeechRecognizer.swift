import Kit

/// Speech to text on the device, one utterance at a time: 16 kHz mono signed 16-bit samples in,
/// the best hypothesis out. Push-to-talk and voice wake talk to this protocol, so another backend
/// can take pocketsphinx's place. Audio is never written anywhere.
public protocol SpeechRecognizer: AnyObject {
    /// The backend's name for logs and `caps` ("pocketsphinx en-us").
    var name: String { get }
    /// Whether recognition can start without loading anything (`prepare()` has run).
    var isReady: Bool { get }
    /// Loads what recognition needs beyond wake-phrase spotting (pocketsphinx: the language model
    /// and dictionary); blocks for as long as that takes. No-op when ready.
    func prepare() throws(NodeError)
    /// Gives that back while nothing is being recognised; `begin()` prepares again.
    func release()
    /// Starts an utterance (the end of an earlier one is discarded); prepares first if needed.
    func begin() throws(NodeError)
    /// Feeds samples in arrival order.
    func feed(_ samples: UnsafeBufferPointer<Int16>) throws(NodeError)
    /// Whether the decoder currently hears speech (for ending an utterance on silence).
    var hearsSpeech: Bool { get }
    /// Whether the last stretch the detector took for speech ended without a word recognised so
    /// far: on a fresh decoder the noise estimate is unset and room noise reads as speech for up
    /// to ~0.9 s, a blip that must not count as the speaker having spoken.
    var speechEndedWithoutWords: Bool { get }
    /// Ends the utterance and returns what was said ("" when nothing was recognised).
    func finish() throws(NodeError) -> String

    // Wake-phrase spotting on the same decoder (one model in memory for both): the phrases are set
    // once, spotting runs between utterances, and `begin()` switches back to recognition.
    /// Sets the phrases to spot (written to `file`, a list the decoder reads).
    func setWakePhrases(_ phrases: [String], file: String) throws(NodeError)
    /// Starts spotting (ends any utterance in progress).
    func beginSpotting() throws(NodeError)
    /// Feeds samples while spotting; the phrase heard, when one was (spotting then starts over).
    func spot(_ samples: UnsafeBufferPointer<Int16>) -> String?
}
