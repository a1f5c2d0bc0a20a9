extension PushToTalk {
    /// The final decode (pocketsphinx's second pass over the whole utterance, most of a turn's
    /// end) is done early, in the speaker's pause, on a thread of its own while the silence window
    /// runs: by the end of the window the transcript is there. Its utterance ends there; a fresh
    /// one listens to what follows. When speech comes back instead, the recognizer starts again
    /// on the capture's audio so far (kept in memory for that) and goes on as if nothing happened:
    /// the transcript is the one a single utterance gives either way (decoding the words after a
    /// pause as an utterance of their own loses the sentence's context: "ten meters" alone is
    /// heard as "ten years").
    ///
    /// Such an undone finish costs its decode and the replay (about a first pass over the capture
    /// so far), so the finish starts as late as it can and still be done by the end of the silence
    /// window (`Pace` predicts how long it takes from how long the last ones took), and never in
    /// the first `after` of a pause.
    enum EarlyFinish {
        /// The earliest start, in silence after the decoder's end of speech. Between phrases a
        /// speaker pauses about 1/3 s, which the decoder hears as ~200 ms of silence (its end of
        /// speech lags the words); such a pause is not finished at. A long utterance whose decode
        /// would need an earlier start is then a little late rather than often undone: an undone
        /// finish costs about five times what it saves (its decode, plus a first pass over the
        /// capture so far).
        static let after: UInt64 = 250_000_000
        /// Audio kept for a replay, at most (16 kHz frames; 20 s, 640 KB). A longer capture is
        /// finished at its end as before, since a replay would cost as much as the audio.
        static let keptFrames = 16_000 * 20
        /// How long finishing an utterance takes per second of its audio, learnt from the finishes
        /// this node made (it depends on the machine and on the model).
        struct Pace {
            /// Before any finish was measured: a little slower than measured on a 2-core x86_64
            /// machine under load (30–45 ms per audio second), so the first one is on time.
            var nsPerAudioSecond: UInt64 = 50_000_000
            /// Headroom for the worker's start and the microphone's chunk granularity.
            static let margin: UInt64 = 40_000_000

            /// The silence after the end of speech at which to start finishing an utterance of
            /// `audioNs`: its predicted decode, with a quarter more and `margin`, before the end
            /// of the silence window, never before `after`.
            func silenceBeforeFinish(audioNs: UInt64) -> UInt64 {
                let decode = audioNs / 1_000_000 * nsPerAudioSecond / 1_000
                let budget = decode + decode / 4 + Self.margin
                return max(after, PushToTalk.silenceAfterSpeech - min(PushToTalk.silenceAfterSpeech, budget))
            }

            /// A finish of `audioNs` of utterance took `took`: the pace moves halfway towards it.
            mutating func learn(took: UInt64, audioNs: UInt64) {
                guard audioNs >= 500_000_000 else { return }  // too short to say much
                let measured = took * 1_000 / (audioNs / 1_000_000)
                nsPerAudioSecond = (nsPerAudioSecond + measured) / 2
            }
        }
    }
}
