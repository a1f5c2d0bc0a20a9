import CFFmpeg
import Support

/// libswscale, bound with dlopen on first use: it pulls in libavutil and, through it, the GPU
/// libraries Debian builds FFmpeg with (libva, libdrm, libvdpau, OpenCL, libmfx), about 0.7 MB of
/// resident memory that an idle node with no camera or screen in use should not carry. Each
/// member has the exact C type of the libswscale function of the same name.
struct SwscaleLibrary: @unchecked Sendable {  // function addresses only, immutable
    let getCachedContext: @convention(c) (OpaquePointer?, Int32, Int32, AVPixelFormat, Int32, Int32, AVPixelFormat, Int32,
                                          UnsafeMutablePointer<SwsFilter>?, UnsafeMutablePointer<SwsFilter>?,
                                          UnsafePointer<Double>?) -> OpaquePointer?
    let freeContext: @convention(c) (OpaquePointer?) -> Void
    /// sws_scale's address, for the C wrappers that build its plane arrays (cff_scale_packed…).
    let scale: UnsafeMutableRawPointer

    /// Loaded once per process; the failure (libswscale missing) is kept and reported each time.
    static let shared: Result<SwscaleLibrary, DynamicLibrary.Failure> = Result { () throws(DynamicLibrary.Failure) in
        try SwscaleLibrary(DynamicLibrary("libswscale.so.\(LIBSWSCALE_VERSION_MAJOR)", package: "libswscale\(LIBSWSCALE_VERSION_MAJOR)"))
    }

    private init(_ lib: DynamicLibrary) throws(DynamicLibrary.Failure) {
        getCachedContext = try lib.function("sws_getCachedContext")
        freeContext = try lib.function("sws_freeContext")
        scale = try lib.address("sws_scale")
    }

    /// For callers that report MediaError.
    static func get() throws(MediaError) -> SwscaleLibrary {
        switch shared {
        case .success(let lib): return lib
        case .failure(let f): throw MediaError(.unsupported, "image scaling unavailable: \(f.description)")
        }
    }
}
