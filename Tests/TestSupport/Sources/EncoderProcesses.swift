import Foundation

/// The video encoder processes (`openclaw-node video-encoder`) a process has started, seen through
/// /proc: tests wait for them (and for their first frame) instead of for the clock.
enum EncoderProcesses {
    /// `pid`'s children running the encoder.
    static func children(of pid: Int32) -> [Int32] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        let children = tasks.flatMap { task in
            ((try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/children", encoding: .utf8)) ?? "")
                .split(separator: " ").compactMap { Int32($0) }
        }
        return children.filter { child in
            let cmdline = (try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(child)/cmdline"))) ?? Data()
            return String(decoding: cmdline, as: UTF8.self).contains("video-encoder")
        }
    }

    /// Whether `library` (or any mapping whose name contains it) is in the process's address space.
    /// Read to the end: String(contentsOfFile:) stops after the first 4 KiB of a /proc file.
    static func maps(_ pid: Int32, _ library: String) -> Bool {
        guard let h = FileHandle(forReadingAtPath: "/proc/\(pid)/maps") else { return false }
        defer { try? h.close() }
        return String(decoding: h.readDataToEndOfFile(), as: UTF8.self).contains(library)
    }

    /// Whether the encoder has been handed its first frame: it maps the shared frame memory then.
    static func hasFrame(_ encoder: Int32) -> Bool { maps(encoder, "openclaw-node-frames") }
}
