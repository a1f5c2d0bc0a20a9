import CALSA
import Support

/// The part of alsa-lib the microphone and playback use, bound with dlopen on first use: a node that never
/// records audio never maps libasound, and a system without it loses only audio (with a message
/// naming the package) instead of every bundle that links Media. Each member has the exact C type
/// of the alsa-lib function of the same name.
struct ALSALibrary: Sendable {
    typealias PCM = OpaquePointer
    typealias HW = OpaquePointer

    let pcmOpen: @convention(c) (UnsafeMutablePointer<PCM?>?, UnsafePointer<CChar>?, snd_pcm_stream_t, Int32) -> Int32
    let pcmClose: @convention(c) (PCM?) -> Int32
    let pcmStart: @convention(c) (PCM?) -> Int32
    let pcmReadi: @convention(c) (PCM?, UnsafeMutableRawPointer?, snd_pcm_uframes_t) -> snd_pcm_sframes_t
    let pcmWritei: @convention(c) (PCM?, UnsafeRawPointer?, snd_pcm_uframes_t) -> snd_pcm_sframes_t
    let pcmDrain: @convention(c) (PCM?) -> Int32
    let pcmDrop: @convention(c) (PCM?) -> Int32
    let pcmPrepare: @convention(c) (PCM?) -> Int32
    let pcmDelay: @convention(c) (PCM?, UnsafeMutablePointer<snd_pcm_sframes_t>?) -> Int32
    let pcmWait: @convention(c) (PCM?, Int32) -> Int32
    let pcmRecover: @convention(c) (PCM?, Int32, Int32) -> Int32
    let pollDescriptorsCount: @convention(c) (PCM?) -> Int32
    let pollDescriptors: @convention(c) (PCM?, UnsafeMutablePointer<pollfd>?, UInt32) -> Int32
    let pollDescriptorsRevents: @convention(c) (PCM?, UnsafeMutablePointer<pollfd>?, UInt32, UnsafeMutablePointer<UInt16>?) -> Int32
    let hwMalloc: @convention(c) (UnsafeMutablePointer<HW?>?) -> Int32
    let hwFree: @convention(c) (HW?) -> Void
    let hwAny: @convention(c) (PCM?, HW?) -> Int32
    let hwCommit: @convention(c) (PCM?, HW?) -> Int32
    let hwCurrent: @convention(c) (PCM?, HW?) -> Int32
    let hwSetAccess: @convention(c) (PCM?, HW?, snd_pcm_access_t) -> Int32
    let hwSetFormat: @convention(c) (PCM?, HW?, snd_pcm_format_t) -> Int32
    let hwSetChannelsNear: @convention(c) (PCM?, HW?, UnsafeMutablePointer<UInt32>?) -> Int32
    let hwSetRateNear: @convention(c) (PCM?, HW?, UnsafeMutablePointer<UInt32>?, UnsafeMutablePointer<Int32>?) -> Int32
    let hwSetBufferTimeNear: @convention(c) (PCM?, HW?, UnsafeMutablePointer<UInt32>?, UnsafeMutablePointer<Int32>?) -> Int32
    let hwGetRate: @convention(c) (HW?, UnsafeMutablePointer<UInt32>?, UnsafeMutablePointer<Int32>?) -> Int32
    let hwGetChannels: @convention(c) (HW?, UnsafeMutablePointer<UInt32>?) -> Int32
    let strerror: @convention(c) (Int32) -> UnsafePointer<CChar>?

    /// Loaded once per process; the failure (libasound missing) is kept and reported each time.
    static let shared: Result<ALSALibrary, DynamicLibrary.Failure> = Result { () throws(DynamicLibrary.Failure) in
        try ALSALibrary(DynamicLibrary("libasound.so.2", package: "libasound2"))
    }

    private init(_ lib: DynamicLibrary) throws(DynamicLibrary.Failure) {
        pcmOpen = try lib.function("snd_pcm_open")
        pcmClose = try lib.function("snd_pcm_close")
        pcmStart = try lib.function("snd_pcm_start")
        pcmReadi = try lib.function("snd_pcm_readi")
        pcmWritei = try lib.function("snd_pcm_writei")
        pcmDrain = try lib.function("snd_pcm_drain")
        pcmDrop = try lib.function("snd_pcm_drop")
        pcmPrepare = try lib.function("snd_pcm_prepare")
        pcmDelay = try lib.function("snd_pcm_delay")
        pcmWait = try lib.function("snd_pcm_wait")
        pcmRecover = try lib.function("snd_pcm_recover")
        pollDescriptorsCount = try lib.function("snd_pcm_poll_descriptors_count")
        pollDescriptors = try lib.function("snd_pcm_poll_descriptors")
        pollDescriptorsRevents = try lib.function("snd_pcm_poll_descriptors_revents")
        hwMalloc = try lib.function("snd_pcm_hw_params_malloc")
        hwFree = try lib.function("snd_pcm_hw_params_free")
        hwAny = try lib.function("snd_pcm_hw_params_any")
        hwCommit = try lib.function("snd_pcm_hw_params")
        hwCurrent = try lib.function("snd_pcm_hw_params_current")
        hwSetAccess = try lib.function("snd_pcm_hw_params_set_access")
        hwSetFormat = try lib.function("snd_pcm_hw_params_set_format")
        hwSetChannelsNear = try lib.function("snd_pcm_hw_params_set_channels_near")
        hwSetRateNear = try lib.function("snd_pcm_hw_params_set_rate_near")
        hwSetBufferTimeNear = try lib.function("snd_pcm_hw_params_set_buffer_time_near")
        hwGetRate = try lib.function("snd_pcm_hw_params_get_rate")
        hwGetChannels = try lib.function("snd_pcm_hw_params_get_channels")
        strerror = try lib.function("snd_strerror")
        calsa_silence_errors(try lib.address("snd_lib_error_set_handler"))
    }

    func describe(_ rc: Int32) -> String { strerror(rc).map { String(cString: $0) } ?? "error \(rc)" }

    /// Configures `pcm` for interleaved S16_LE with the channel count and rate nearest the request
    /// (and, if given, a buffer time near `bufferUs`). Returns a negative alsa-lib code when the
    /// device refuses, else what it settled on; callers decide whether that is acceptable.
    func configureS16(_ pcm: PCM, rate: Int, channels: Int, bufferUs: UInt32? = nil) -> (rc: Int32, rate: Int, channels: Int) {
        var hw: HW?
        var rc = hwMalloc(&hw)
        guard rc >= 0, let hw else { return (rc, 0, 0) }
        defer { hwFree(hw) }
        rc = hwAny(pcm, hw)
        if rc >= 0 { rc = hwSetAccess(pcm, hw, SND_PCM_ACCESS_RW_INTERLEAVED) }
        if rc >= 0 { rc = hwSetFormat(pcm, hw, SND_PCM_FORMAT_S16_LE) }
        var ch = UInt32(channels)
        if rc >= 0 { rc = hwSetChannelsNear(pcm, hw, &ch) }
        var r = UInt32(rate), dir: Int32 = 0
        if rc >= 0 { rc = hwSetRateNear(pcm, hw, &r, &dir) }
        if rc >= 0, var us = bufferUs { _ = hwSetBufferTimeNear(pcm, hw, &us, &dir) }
        if rc >= 0 { rc = hwCommit(pcm, hw) }
        return (rc, Int(r), Int(ch))
    }
}
