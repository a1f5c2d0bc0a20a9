import CSystemd
import Support

/// The part of libsystemd the node uses (sd-login for presence, sd-bus for logind's properties and
/// the resume signal), bound with dlopen on first use: `status`, `caps` and `--help` never map it or
/// what it links (libgcrypt, liblz4, libzstd, liblzma, libcap). Each member has the exact C type of
/// the function of the same name; the variadic ones are reached through the shim.
public struct SystemdLibrary: Sendable {
    public typealias Bus = OpaquePointer
    public typealias Slot = OpaquePointer
    public typealias Handler = @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, UnsafeMutablePointer<sd_bus_error>?) -> Int32

    let getSeats: @convention(c) (UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>?) -> Int32
    let pidGetSession: @convention(c) (pid_t, UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32
    let sessionGetSeat: @convention(c) (UnsafePointer<CChar>?, UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32
    let seatGetActive: @convention(c) (UnsafePointer<CChar>?, UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, UnsafeMutablePointer<uid_t>?) -> Int32
    public let busOpenSystem: @convention(c) (UnsafeMutablePointer<Bus?>?) -> Int32
    public let busOpenUser: @convention(c) (UnsafeMutablePointer<Bus?>?) -> Int32
    public let busUnref: @convention(c) (Bus?) -> Bus?
    public let busFlushCloseUnref: @convention(c) (Bus?) -> Bus?
    let busPathEncode: @convention(c) (UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32
    public let busMatchSignal: @convention(c) (Bus?, UnsafeMutablePointer<Slot?>?, UnsafePointer<CChar>?, UnsafePointer<CChar>?,
                                               UnsafePointer<CChar>?, UnsafePointer<CChar>?, Handler?, UnsafeMutableRawPointer?) -> Int32
    public let busProcess: @convention(c) (Bus?, UnsafeMutablePointer<OpaquePointer?>?) -> Int32
    public let busGetFd: @convention(c) (Bus?) -> Int32
    public let busGetEvents: @convention(c) (Bus?) -> Int32
    public let busGetTimeout: @convention(c) (Bus?, UnsafeMutablePointer<UInt64>?) -> Int32
    public let slotUnref: @convention(c) (Slot?) -> Slot?
    // The variadic functions' addresses (as integers, which are Sendable), for the shim.
    let getPropertyTrivial: UInt
    let errorFree: UInt
    let messageRead: UInt
    let callMethod: UInt
    let messageUnref: UInt

    /// Loaded once per process; the failure (no libsystemd) is kept and reported each time.
    public static let shared: Result<SystemdLibrary, DynamicLibrary.Failure> = Result { () throws(DynamicLibrary.Failure) in
        try SystemdLibrary(DynamicLibrary("libsystemd.so.0", package: "libsystemd0"))
    }

    private init(_ lib: DynamicLibrary) throws(DynamicLibrary.Failure) {
        getSeats = try lib.function("sd_get_seats")
        pidGetSession = try lib.function("sd_pid_get_session")
        sessionGetSeat = try lib.function("sd_session_get_seat")
        seatGetActive = try lib.function("sd_seat_get_active")
        busOpenSystem = try lib.function("sd_bus_open_system")
        busOpenUser = try lib.function("sd_bus_open_user")
        busUnref = try lib.function("sd_bus_unref")
        busFlushCloseUnref = try lib.function("sd_bus_flush_close_unref")
        busPathEncode = try lib.function("sd_bus_path_encode")
        busMatchSignal = try lib.function("sd_bus_match_signal")
        busProcess = try lib.function("sd_bus_process")
        busGetFd = try lib.function("sd_bus_get_fd")
        busGetEvents = try lib.function("sd_bus_get_events")
        busGetTimeout = try lib.function("sd_bus_get_timeout")
        slotUnref = try lib.function("sd_bus_slot_unref")
        getPropertyTrivial = UInt(bitPattern: try lib.address("sd_bus_get_property_trivial"))
        errorFree = UInt(bitPattern: try lib.address("sd_bus_error_free"))
        messageRead = UInt(bitPattern: try lib.address("sd_bus_message_read"))
        callMethod = UInt(bitPattern: try lib.address("sd_bus_call_method"))
        messageUnref = UInt(bitPattern: try lib.address("sd_bus_message_unref"))
    }

    /// logind's `Inhibit(what, who, why, mode)`: the lock's descriptor (close it to end the lock),
    /// or why there is none.
    func inhibit(_ bus: Bus?, what: String, who: String, why: String, mode: String) -> Result<Int32, InhibitFailure> {
        var fd: Int32 = -1
        var message = [CChar](repeating: 0, count: 512)
        let r = csystemd_inhibit(UnsafeMutableRawPointer(bitPattern: callMethod), UnsafeMutableRawPointer(bitPattern: messageRead),
                                 UnsafeMutableRawPointer(bitPattern: messageUnref), UnsafeMutableRawPointer(bitPattern: errorFree),
                                 bus, what, who, why, mode, &fd, &message, message.count)
        guard r >= 0, fd >= 0 else {
            let text = String(cBuffer: message)
            return .failure(InhibitFailure(text.isEmpty ? String(cString: strerror(-r)) : text))
        }
        return .success(fd)
    }

    /// The desktop portal's `Inhibit("", flags, {reason})`: the request's object path (its
    /// `Close` ends the inhibition, as does this bus connection closing), or why there is none.
    func portalInhibit(_ bus: Bus?, flags: UInt32, why: String) -> Result<String, InhibitFailure> {
        var handle = [CChar](repeating: 0, count: 256)
        var message = [CChar](repeating: 0, count: 512)
        let r = csystemd_portal_inhibit(UnsafeMutableRawPointer(bitPattern: callMethod), UnsafeMutableRawPointer(bitPattern: messageRead),
                                        UnsafeMutableRawPointer(bitPattern: messageUnref), UnsafeMutableRawPointer(bitPattern: errorFree),
                                        bus, flags, why, &handle, handle.count, &message, message.count)
        let path = String(cBuffer: handle)
        guard r >= 0, !path.isEmpty else {
            let text = String(cBuffer: message)
            return .failure(InhibitFailure(text.isEmpty ? String(cString: strerror(-r)) : text))
        }
        return .success(path)
    }

    /// `org.freedesktop.portal.Request.Close()` on a request the portal handed out.
    func closePortalRequest(_ bus: Bus?, _ path: String) -> Int32 {
        csystemd_close_request(UnsafeMutableRawPointer(bitPattern: callMethod), UnsafeMutableRawPointer(bitPattern: errorFree), bus, path)
    }

    /// A boolean property over the bus (`sd_bus_get_property_trivial(…, 'b', …)`).
    func boolProperty(_ bus: Bus?, _ destination: String, _ path: UnsafePointer<CChar>, _ interface: String, _ member: String) -> Bool? {
        var v: Int32 = 0
        let r = csystemd_get_bool_property(UnsafeMutableRawPointer(bitPattern: getPropertyTrivial), UnsafeMutableRawPointer(bitPattern: errorFree), bus, destination, path, interface, member, &v)
        return r >= 0 ? v != 0 : nil
    }

    /// The one boolean argument of a signal (`sd_bus_message_read(m, "b", …)`).
    public func readBool(_ message: OpaquePointer) -> Bool? {
        var v: Int32 = 0
        return csystemd_read_bool(UnsafeMutableRawPointer(bitPattern: messageRead), message, &v) >= 0 ? v != 0 : nil
    }
}
