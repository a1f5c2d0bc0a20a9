import CFFmpeg
import Support

/// libswscale, bound with dlopen on first use: it pulls in libavutil and, through it, the GPU
/// libraries Debian builds FFmpeg with (libva, libdrm, libvdpau, OpenCL, libmfx), about 0.7 MB of
/// resident memory that an idle node with no camera or screen in use should not carry; closed
/// again once no ImageScaler has used it for `IdleLibraryRelease.after`. Each member has the exact
/// C type of the libswscale function of the same name. A copy keeps the library open.
struct SwscaleLibrary: @unchecked Sendable {  // function addresses and their handle, immutable
    private let handle: DynamicLibrary
    let getCachedContext: @convention(c) (OpaquePointer?, Int32, Int32, AVPixelFormat, Int32, Int32, AVPixelFormat, Int32,
                                          UnsafeMutablePointer<SwsFilter>?, UnsafeMutablePointer<SwsFilter>?,
                                          UnsafePointer<Double>?) -> OpaquePointer?
    let freeContext: @convention(c) (OpaquePointer?) -> Void
    /// sws_scale's address, for the C wrappers that build its plane arrays (cff_scale_packed…).
    let scale: UnsafeMutableRawPointer

    /// Loaded on first use, released when idle; a failure (libswscale missing) is reported each time.
    static let shared = IdleReleased<SwscaleLibrary, DynamicLibrary.Failure>(
        load: {
            Result { () throws(DynamicLibrary.Failure) in
                try SwscaleLibrary(DynamicLibrary("libswscale.so.\(LIBSWSCALE_VERSION_MAJOR)", package: "libswscale\(LIBSWSCALE_VERSION_MAJOR)",
                                                  closeWhenReleased: true))
            }
        },
        releaseAfter: { IdleLibraryRelease.after },
        released: { IdleLibraryRelease.librariesReleased("libswscale") })

    private init(_ lib: DynamicLibrary) throws(DynamicLibrary.Failure) {
        handle = lib
        getCachedContext = try lib.function("sws_getCachedContext")
        freeContext = try lib.function("sws_freeContext")
        scale = try lib.address("sws_scale")
    }

    /// For callers that report MediaError: the library, kept loaded while the lease lives.
    static func lease() throws(MediaError) -> IdleReleased<SwscaleLibrary, DynamicLibrary.Failure>.Lease {
        switch shared.lease() {
        case .success(let lease): return lease
        case .failure(let f): throw MediaError(.unsupported, "image scaling unavailable: \(f.description)")
        }
    }
}
