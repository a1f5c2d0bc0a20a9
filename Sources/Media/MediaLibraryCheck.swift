import Kit

/// What the screen and camera bundles open only when a command first needs it — libswscale for
/// scaling, the video library (and through it libavcodec, libavformat, libavutil) for recording —
/// loaded up front by `doctor`, so a missing library or a package built for another Debian
/// release is named before the first snapshot or clip fails. Loading them here starts their idle
/// period like any use (IdleLibraryRelease).
public enum MediaLibraryCheck {
    public static func diagnose() -> [Diagnosis] {
        var out: [Diagnosis] = []
        switch SwscaleLibrary.shared.lease() {
        case .success: out.append(Diagnosis(.ok, "image scaling: libswscale loads"))
        case .failure(let f): out.append(Diagnosis(.fail, "image scaling (maxWidth) will fail: \(f.description)"))
        }
        do throws(MediaError) {
            try VideoEncoding.checkLibraries()
            out.append(Diagnosis(.ok, "recording: the video library (libavcodec, libavformat) loads"))
            out.append(Diagnosis(.ok, "recording: H.264 encoder \(try VideoEncoding.encoderReport())"))
        } catch {
            out.append(Diagnosis(.fail, "recording will fail: \(error.description)"))
        }
        return out
    }
}
