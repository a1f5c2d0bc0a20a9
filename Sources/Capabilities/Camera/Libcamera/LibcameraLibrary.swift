import Glibc
import Kit
import Media
import Support

/// libopenclaw-libcamera.so (Sources/LibcameraShim): libcamera's C++ API behind a C one, built per
/// Debian release against that release's libcamera and shipped in the openclaw-node-libcamera
/// package beside the bundles. Opened with dlopen when a libcamera camera is first used, so the
/// node itself never depends on a libcamera soname (they change with every libcamera release).
/// libcamera and what it brings (libstdc++'s parts, libyaml, lttng-ust, the pipeline handlers) are
/// closed again, like FFmpeg's, once nothing has used them for node.releaseIdleLibrariesAfter.
final class LibcameraLibrary: Sendable {
    typealias List = @convention(c) (UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> UnsafeMutablePointer<CChar>?
    typealias Open = @convention(c) (UnsafePointer<CChar>?, Int32, Int32, Int32, UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> UnsafeMutableRawPointer?
    typealias Format = @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<Int32>?, UnsafeMutablePointer<Int32>?, UnsafeMutablePointer<Int32>?) -> Void
    typealias Frame = @convention(c) (UnsafeMutableRawPointer?, Int32, UnsafeMutablePointer<UnsafePointer<UInt8>?>?, UnsafeMutablePointer<Int>?,
                                      UnsafeMutablePointer<Int64>?, UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32
    typealias Close = @convention(c) (UnsafeMutableRawPointer?) -> Void
    typealias Free = @convention(c) (UnsafeMutableRawPointer?) -> Void
    typealias Version = @convention(c) () -> UnsafePointer<CChar>?

    static let fileName = "libopenclaw-libcamera.so"

    let library: DynamicLibrary
    let list: List, open: Open, format: Format, frame: Frame, close: Close, free: Free
    let version: String

    /// The library beside the bundles (`directory`) only, and only if it passes the bundles' own
    /// trust rule (owned by root or this user, writable by nobody else): never from
    /// LD_LIBRARY_PATH or the linker's search, as the bundles themselves.
    init(directory: String?) throws(DynamicLibrary.Failure) {
        guard let dir = directory, FileSystem.exists(dir + "/" + Self.fileName) else {
            throw DynamicLibrary.Failure(description: "\(Self.fileName) is not installed beside the bundles")
        }
        let path = dir + "/" + Self.fileName
        if let problem = FileTrust.problem(path) { throw DynamicLibrary.Failure(description: "not loading \(path): \(problem)") }
        library = try DynamicLibrary(path, package: "openclaw-node-libcamera", closeWhenReleased: true)
        list = try library.function("ocl_list")
        open = try library.function("ocl_open")
        format = try library.function("ocl_format")
        frame = try library.function("ocl_frame")
        close = try library.function("ocl_close")
        free = try library.function("ocl_free")
        let v: Version = try library.function("ocl_version")
        version = v().map { String(cString: $0) } ?? "?"
    }

    typealias Holder = IdleReleased<LibcameraLibrary, DynamicLibrary.Failure>
    private static let holders = Locked<[String: Holder]>([:])

    /// The library in `directory`, loaded now if it is not, kept while the lease lives and for
    /// IdleLibraryRelease.after beyond (one holder per directory; in practice there is one).
    static func lease(directory: String?) -> Result<Holder.Lease, DynamicLibrary.Failure> {
        let holder = holders.withLock { h -> Holder in
            let key = directory ?? ""
            if let existing = h[key] { return existing }
            let made = Holder(load: { Result { () throws(DynamicLibrary.Failure) in try LibcameraLibrary(directory: directory) } },
                              releaseAfter: { IdleLibraryRelease.after },
                              released: { IdleLibraryRelease.librariesReleased("libcamera (\(fileName))") })
            h[key] = made
            return made
        }
        return holder.lease()
    }

    /// Whether libcamera is loaded now (tests, bench).
    static var isLoaded: Bool { holders.withLock { $0.values.contains { $0.isLoaded } } }

    /// A malloc'ed C string from the library, as a String (and freed).
    func take(_ p: UnsafeMutablePointer<CChar>?) -> String? {
        guard let p else { return nil }
        defer { free(p) }
        return String(cString: p)
    }
}

/// One camera libcamera lists.
struct LibcameraCamera: Sendable, Equatable {
    let id: String
    let model: String
    let location: String
    let width: Int
    let height: Int

    /// camera.list's id: "libcamera:" and libcamera's own id (a device-tree path on a Pi).
    var deviceId: String { "libcamera:" + id }

    static func parse(_ json: String) -> [LibcameraCamera] {
        (JSONValue.parse(json)?.arrayValue ?? []).compactMap { c in
            guard let id = c["id"]?.stringValue, !id.isEmpty else { return nil }
            return LibcameraCamera(id: id, model: c["model"]?.stringValue ?? id, location: c["location"]?.stringValue ?? "unknown",
                                   width: c["width"]?.intValue ?? 0, height: c["height"]?.intValue ?? 0)
        }
    }

    /// A USB camera libcamera's uvcvideo pipeline also offers: the V4L2 backend serves those.
    var isUSB: Bool {
        let tail = id.split(separator: "-").last.map(String.init) ?? ""
        let parts = tail.split(separator: ":")
        return parts.count == 2 && parts.allSatisfy { $0.count == 4 && $0.allSatisfy(\.isHexDigit) }
    }
}
