import CFFmpeg
import Media

extension FFmpegLibraries {
    /// A MediaError carrying FFmpeg's text for `code` ("Invalid argument", "Resource temporarily unavailable").
    func error(_ what: String, _ code: Int32) -> MediaError {
        var buf = [CChar](repeating: 0, count: 256)
        _ = self.av_strerror(code, &buf, buf.count)
        let text = String(cBuffer: buf)
        return MediaError(.codec, "\(what): \(text)")
    }
}
