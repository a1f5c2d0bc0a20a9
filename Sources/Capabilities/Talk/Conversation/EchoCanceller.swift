import Kit
import Media
import Support

/// WebRTC's echo canceller (libopenclaw-aec.so, Sources/EchoCancellerShim) for realtime talk in
/// full duplex: the reply as it is written to the speaker is the reference, and the microphone
/// comes out with the reply's echo removed, so the provider hears the person and not itself and
/// the person can interrupt by speaking. It runs at 48 kHz in 10 ms frames; the reference is
/// resampled to that from the speaker's rate. WebRTC's processor takes the two sides from two
/// threads (the playback thread and the capture thread); each side's buffers belong to its thread.
final class EchoCanceller: @unchecked Sendable {  // the C object is used by one thread per side, as its API allows
    typealias New = @convention(c) (Int32) -> UnsafeMutableRawPointer?
    typealias Process = @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<Float>?) -> Int32
    typealias Capture = @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<Float>?, Int32) -> Int32
    typealias Free = @convention(c) (UnsafeMutableRawPointer?) -> Void
    typealias Version = @convention(c) () -> UnsafePointer<CChar>?

    static let rate = 48_000
    static let frame = rate / 100
    static let fileName = "libopenclaw-aec.so"

    private let library: DynamicLibrary
    private let handle: UnsafeMutableRawPointer
    private let renderFrame: Process
    private let captureFrame: Capture
    private let free: Free
    let version: String
    /// Render side (playback thread): samples not yet a whole frame, and the resampler to 48 kHz.
    private var renderPending: [Float] = []
    private var renderResampler: AudioResampler?
    /// Capture side (microphone thread).
    private var capturePending: [Float] = []

    /// The library beside the bundles (`directory`) only, and only if it passes the bundles' own
    /// trust rule: never from LD_LIBRARY_PATH or the linker's search, as the bundles themselves.
    init(directory: String?) throws(NodeError) {
        guard let dir = directory, FileSystem.exists(dir + "/" + Self.fileName) else {
            throw NodeError(.unavailable, "no echo canceller: \(Self.fileName) is not installed beside the bundles")
        }
        let path = dir + "/" + Self.fileName
        if let problem = FileTrust.problem(path) { throw NodeError(.unavailable, "no echo canceller: not loading \(path): \(problem)") }
        do throws(DynamicLibrary.Failure) {
            library = try DynamicLibrary(path, package: "libwebrtc-audio-processing1")
            let make: New = try library.function("ocn_aec_new")
            renderFrame = try library.function("ocn_aec_render")
            captureFrame = try library.function("ocn_aec_capture")
            free = try library.function("ocn_aec_free")
            let v: Version = try library.function("ocn_aec_version")
            version = v().map { String(cString: $0) } ?? "?"
            guard let h = make(Int32(Self.rate)) else { throw DynamicLibrary.Failure(description: "the echo canceller did not start") }
            handle = h
        } catch {
            throw NodeError(.unavailable, "no echo canceller: \(error.description)")
        }
    }

    deinit { free(handle) }

    /// What the speaker was given, at `rate`: the reference the echo is recognised by.
    func render(_ samples: [Int16], rate: Int) {
        if renderResampler?.inputRate != rate { renderResampler = AudioResampler(from: rate, to: Self.rate) }
        let up = renderResampler!.process(samples)
        renderPending += up.map { Float($0) / 32768 }
        var offset = 0
        while renderPending.count - offset >= Self.frame {
            renderPending.withUnsafeMutableBufferPointer { b in _ = renderFrame(handle, b.baseAddress! + offset) }
            offset += Self.frame
        }
        renderPending.removeFirst(offset)
    }

    /// Microphone samples at 48 kHz with the echo removed, in whole 10 ms frames (what is left
    /// waits for the next call). `delayMs`: the speaker's buffer plus the capture's, roughly.
    func capture(_ samples: [Int16], delayMs: Int) -> [Int16] {
        capturePending += samples.map { Float($0) / 32768 }
        var out: [Int16] = []
        out.reserveCapacity(capturePending.count)
        var offset = 0
        while capturePending.count - offset >= Self.frame {
            capturePending.withUnsafeMutableBufferPointer { b in _ = captureFrame(handle, b.baseAddress! + offset, Int32(delayMs)) }
            for i in offset..<(offset + Self.frame) { out.append(Int16(clamping: Int((capturePending[i] * 32768).rounded()))) }
            offset += Self.frame
        }
        capturePending.removeFirst(offset)
        return out
    }
}
