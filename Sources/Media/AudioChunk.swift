import Glibc
import Support

/// A run of microphone samples: interleaved signed 16-bit, `frames × channels` values.
public struct AudioChunk: Sendable {
    public let samples: [Int16]
    public let frames: Int
    public let channels: Int
    /// CLOCK_MONOTONIC time of the first sample in ns: the clock FramePacer and the camera use, so
    /// audio and video line up by subtracting the clip's start time.
    public let timestampNs: UInt64

    public init(samples: [Int16], frames: Int, channels: Int, timestampNs: UInt64) {
        self.samples = samples; self.frames = frames; self.channels = channels; self.timestampNs = timestampNs
    }
}

/// Hands chunks from the capture thread to the encoding thread, which drains it between video
/// frames (the recorder is used by one thread only, so the capture thread never touches it).
public final class AudioChunkQueue: Sendable {
    private let chunks = Locked<[AudioChunk]>([])

    public init() {}

    public func push(_ chunk: AudioChunk) { chunks.withLock { $0.append(chunk) } }

    /// Everything queued so far, oldest first.
    public func takeAll() -> [AudioChunk] {
        chunks.withLock { c in defer { c = [] }; return c }
    }
}

/// CLOCK_MONOTONIC now, in ns.
public func monotonicNowNs() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}
