import CMPG123
import Support

/// The part of libmpg123 that decodes an MP3 reply held in memory (feed mode), bound with dlopen
/// the first time the gateway sends MP3: a node whose replies come as PCM or are spoken with
/// espeak-ng never maps it, and a system without it loses only MP3 replies, with a message naming
/// the package. Each member has the exact C type of the libmpg123 function of the same name.
struct MPG123Library: Sendable {
    typealias Handle = OpaquePointer

    let new: @convention(c) (UnsafePointer<CChar>?, UnsafeMutablePointer<Int32>?) -> Handle?
    let delete: @convention(c) (Handle?) -> Void
    /// The pre-1.32 name; libmpg123 keeps exporting it next to mpg123_param2.
    let param: @convention(c) (Handle?, mpg123_parms, Int, Double) -> Int32
    let formatNone: @convention(c) (Handle?) -> Int32
    let format: @convention(c) (Handle?, Int, Int32, Int32) -> Int32
    let rates: @convention(c) (UnsafeMutablePointer<UnsafePointer<Int>?>?, UnsafeMutablePointer<Int>?) -> Void
    let openFeed: @convention(c) (Handle?) -> Int32
    let feed: @convention(c) (Handle?, UnsafePointer<UInt8>?, Int) -> Int32
    let read: @convention(c) (Handle?, UnsafeMutableRawPointer?, Int, UnsafeMutablePointer<Int>?) -> Int32
    let getformat: @convention(c) (Handle?, UnsafeMutablePointer<Int>?, UnsafeMutablePointer<Int32>?, UnsafeMutablePointer<Int32>?) -> Int32
    let plainStrerror: @convention(c) (Int32) -> UnsafePointer<CChar>?

    static let shared: Result<MPG123Library, DynamicLibrary.Failure> = Result { () throws(DynamicLibrary.Failure) in
        let lib = try DynamicLibrary("libmpg123.so.0", package: "libmpg123-0")
        // Needed before 1.27 and harmless since: sets up the decoder tables once per process.
        let initialize: @convention(c) () -> Int32 = try lib.function("mpg123_init")
        _ = initialize()
        return try MPG123Library(lib)
    }

    private init(_ lib: DynamicLibrary) throws(DynamicLibrary.Failure) {
        new = try lib.function("mpg123_new")
        delete = try lib.function("mpg123_delete")
        param = try lib.function("mpg123_param")
        formatNone = try lib.function("mpg123_format_none")
        format = try lib.function("mpg123_format")
        rates = try lib.function("mpg123_rates")
        openFeed = try lib.function("mpg123_open_feed")
        feed = try lib.function("mpg123_feed")
        read = try lib.function("mpg123_read")
        getformat = try lib.function("mpg123_getformat")
        plainStrerror = try lib.function("mpg123_plain_strerror")
    }

    func describe(_ rc: Int32) -> String { plainStrerror(rc).map { String(cString: $0) } ?? "error \(rc)" }
}
