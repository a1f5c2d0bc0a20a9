import CAvahi
import Support

/// The part of the Avahi client the LAN browser uses, bound with dlopen when discovery runs: a node
/// with `gateway.url` set, and every one-shot command, never maps libavahi-client, libdbus or the
/// libsystemd libdbus links. Each member has the exact C type of the function of the same name
/// (libavahi-common's functions are found through libavahi-client, which links it).
struct AvahiLibrary: Sendable {
    let simplePollNew: @convention(c) () -> OpaquePointer?
    let simplePollFree: @convention(c) (OpaquePointer?) -> Void
    let simplePollIterate: @convention(c) (OpaquePointer?, Int32) -> Int32
    let simplePollQuit: @convention(c) (OpaquePointer?) -> Void
    let simplePollGet: @convention(c) (OpaquePointer?) -> UnsafePointer<AvahiPoll>?
    let clientNew: @convention(c) (UnsafePointer<AvahiPoll>?, AvahiClientFlags, AvahiClientCallback?, UnsafeMutableRawPointer?,
                                   UnsafeMutablePointer<Int32>?) -> OpaquePointer?
    let clientFree: @convention(c) (OpaquePointer?) -> Void
    let clientErrno: @convention(c) (OpaquePointer?) -> Int32
    let strerror: @convention(c) (Int32) -> UnsafePointer<CChar>?
    let serviceBrowserNew: @convention(c) (OpaquePointer?, AvahiIfIndex, AvahiProtocol, UnsafePointer<CChar>?, UnsafePointer<CChar>?,
                                           AvahiLookupFlags, AvahiServiceBrowserCallback?, UnsafeMutableRawPointer?) -> OpaquePointer?
    let serviceBrowserFree: @convention(c) (OpaquePointer?) -> Int32
    let serviceResolverNew: @convention(c) (OpaquePointer?, AvahiIfIndex, AvahiProtocol, UnsafePointer<CChar>?, UnsafePointer<CChar>?,
                                            UnsafePointer<CChar>?, AvahiProtocol, AvahiLookupFlags, AvahiServiceResolverCallback?,
                                            UnsafeMutableRawPointer?) -> OpaquePointer?
    let serviceResolverFree: @convention(c) (OpaquePointer?) -> Int32
    let stringListGetText: @convention(c) (UnsafeMutablePointer<AvahiStringList>?) -> UnsafeMutablePointer<UInt8>?
    let stringListGetNext: @convention(c) (UnsafeMutablePointer<AvahiStringList>?) -> UnsafeMutablePointer<AvahiStringList>?
    let addressSnprint: @convention(c) (UnsafeMutablePointer<CChar>?, Int, UnsafePointer<AvahiAddress>?) -> UnsafeMutablePointer<CChar>?

    /// Loaded once per process; the failure (no libavahi-client) is kept and reported each time.
    static let shared: Result<AvahiLibrary, DynamicLibrary.Failure> = Result { () throws(DynamicLibrary.Failure) in
        try AvahiLibrary(DynamicLibrary("libavahi-client.so.3", package: "libavahi-client3"))
    }

    private init(_ lib: DynamicLibrary) throws(DynamicLibrary.Failure) {
        simplePollNew = try lib.function("avahi_simple_poll_new")
        simplePollFree = try lib.function("avahi_simple_poll_free")
        simplePollIterate = try lib.function("avahi_simple_poll_iterate")
        simplePollQuit = try lib.function("avahi_simple_poll_quit")
        simplePollGet = try lib.function("avahi_simple_poll_get")
        clientNew = try lib.function("avahi_client_new")
        clientFree = try lib.function("avahi_client_free")
        clientErrno = try lib.function("avahi_client_errno")
        strerror = try lib.function("avahi_strerror")
        serviceBrowserNew = try lib.function("avahi_service_browser_new")
        serviceBrowserFree = try lib.function("avahi_service_browser_free")
        serviceResolverNew = try lib.function("avahi_service_resolver_new")
        serviceResolverFree = try lib.function("avahi_service_resolver_free")
        stringListGetText = try lib.function("avahi_string_list_get_text")
        stringListGetNext = try lib.function("avahi_string_list_get_next")
        addressSnprint = try lib.function("avahi_address_snprint")
    }

    /// avahi's text for an error code.
    func describe(_ error: Int32) -> String { strerror(error).map { String(cString: $0) } ?? "error \(error)" }

    /// Numeric text of a resolved address; "" when avahi cannot print it.
    func addressText(_ a: UnsafePointer<AvahiAddress>?) -> String {
        guard let a else { return "" }
        var buf = [CChar](repeating: 0, count: Int(cavahi_address_text_max()))
        _ = addressSnprint(&buf, buf.count, a)
        return String(cBuffer: buf)
    }
}
