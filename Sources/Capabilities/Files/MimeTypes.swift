import Support

/// MIME types as upstream reports them: file.fetch asks `file -b --mime-type` (libmagic, from the
/// content) and falls back to the extension; dir.list goes by the extension only.
enum MimeTypes {
    static let fallback = "application/octet-stream"

    /// By extension (lower-cased), else application/octet-stream.
    static func byExtension(_ name: String) -> String {
        let last = PathName.lastComponent(name)
        guard let dot = last.lastIndex(of: "."), dot != last.startIndex else { return fallback }
        return table[String(last[dot...]).lowercased()] ?? fallback
    }

    /// From the content of the open file `fd` (given to `file` as its descriptor 3, so the file is
    /// the one checked, not whatever the path names now); the extension when `file` is missing or fails.
    static func detect(fd: Int32, name: String) async -> String {
        if let file = ToolProcess.find("file") {
            let run = await ToolProcess(executable: file, arguments: ["-L", "-b", "--mime-type", "/proc/self/fd/3"],
                                        extraFDs: [3: fd], outputCap: 4096, timeout: .seconds(2)).run()
            let text = String(decoding: run.stdout, as: UTF8.self).trimmingSpaces
            if run.succeeded, !text.isEmpty { return text }
        }
        return byExtension(name)
    }

    private static let table: [String: String] = [
        ".txt": "text/plain", ".md": "text/markdown", ".csv": "text/csv", ".tsv": "text/tab-separated-values",
        ".html": "text/html", ".htm": "text/html", ".css": "text/css", ".js": "text/javascript", ".mjs": "text/javascript",
        ".json": "application/json", ".xml": "application/xml", ".yaml": "application/yaml", ".yml": "application/yaml",
        ".toml": "application/toml", ".log": "text/plain", ".ini": "text/plain", ".conf": "text/plain",
        ".sh": "application/x-sh", ".py": "text/x-python", ".swift": "text/x-swift", ".c": "text/x-c", ".h": "text/x-c",
        ".pdf": "application/pdf", ".zip": "application/zip", ".gz": "application/gzip", ".tgz": "application/gzip",
        ".tar": "application/x-tar", ".bz2": "application/x-bzip2", ".xz": "application/x-xz", ".7z": "application/x-7z-compressed",
        ".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp",
        ".bmp": "image/bmp", ".svg": "image/svg+xml", ".ico": "image/x-icon", ".tif": "image/tiff", ".tiff": "image/tiff",
        ".heic": "image/heic", ".avif": "image/avif",
        ".mp3": "audio/mpeg", ".wav": "audio/wav", ".ogg": "audio/ogg", ".flac": "audio/flac", ".m4a": "audio/mp4", ".opus": "audio/opus",
        ".mp4": "video/mp4", ".mov": "video/quicktime", ".webm": "video/webm", ".mkv": "video/x-matroska", ".avi": "video/x-msvideo",
        ".doc": "application/msword", ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        ".xls": "application/vnd.ms-excel", ".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        ".ppt": "application/vnd.ms-powerpoint", ".pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        ".odt": "application/vnd.oasis.opendocument.text", ".wasm": "application/wasm",
    ]
}
