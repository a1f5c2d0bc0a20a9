extension String {
    /// The text of a NUL-terminated C buffer that a C function filled in (getnameinfo,
    /// ERR_error_string_n, av_strerror, …); stops at the first NUL, or at the end of the buffer.
    public init(cBuffer buf: [CChar]) {
        self = String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
