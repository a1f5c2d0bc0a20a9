import CSystemd
import Glibc
import HostPresence
import Kit
import Store
import Support

/// Listens for logind's PrepareForSleep(false) — the system just resumed — on the system bus.
/// After a suspend the gateway connection is usually dead while the node still thinks it is up;
/// this lets the node check it at once and announce itself (node.presence.alive).
public final class SleepMonitor: @unchecked Sendable {
    // The bus and slot are set in init and freed in deinit, touched in between only by the loop thread.
    private var bus: OpaquePointer?
    private var slot: OpaquePointer?
    private let onResume: @Sendable () -> Void
    private let stopped = Locked(false)
    /// Signalled by stop(): the loop's poll() waits on it next to the bus fd.
    private let stopping = Wakeup()
    private let sd: SystemdLibrary

    /// nil without a system bus or libsystemd (containers, minimal images): resume detection is
    /// then off.
    public init?(onResume: @escaping @Sendable () -> Void) {
        self.onResume = onResume
        // Checked before libsystemd is opened: mapping it (and the libraries it pulls in) costs
        // about 1 MiB of the idle daemon, for nothing where no logind could ever send the signal.
        guard SleepMonitor.systemBusExists else { return nil }
        guard let sd = try? SystemdLibrary.shared.get() else { return nil }
        self.sd = sd
        var b: OpaquePointer?
        guard sd.busOpenSystem(&b) >= 0, let b else { return nil }
        bus = b
        let me = Unmanaged.passUnretained(self).toOpaque()
        let r = sd.busMatchSignal(b, &slot, "org.freedesktop.login1", "/org/freedesktop/login1",
                                  "org.freedesktop.login1.Manager", "PrepareForSleep", { m, userdata, _ in
            guard let m, let userdata else { return 0 }
            let monitor = Unmanaged<SleepMonitor>.fromOpaque(userdata).takeUnretainedValue()
            if monitor.sd.readBool(m) == false { monitor.onResume() }
            return 0
        }, me)
        guard r >= 0 else { _ = sd.busUnref(b); bus = nil; return nil }
        BlockingExecutor.startLoop(name: "sleep-monitor") { [weak self] in self?.loop() }
    }

    /// logind's signals come over the system bus; its socket is where sd-bus would look.
    static var systemBusExists: Bool {
        ProcessEnvironment.value("DBUS_SYSTEM_BUS_ADDRESS") != nil || FileSystem.exists("/run/dbus/system_bus_socket")
    }

    private func loop() {
        while true {
            let (b, done) = (bus, stopped.withLock { $0 })
            guard let b, !done else { return }
            let r = sd.busProcess(b, nil)
            if r < 0 { return }
            if r > 0 { continue }
            // What sd_bus_wait does (the bus fd, its events and its own timeout), plus the stop
            // wake-up, so stop() ends the wait at once instead of after a periodic timeout.
            let fd = sd.busGetFd(b), events = sd.busGetEvents(b)
            guard fd >= 0, events >= 0 else { return }
            var until: UInt64 = .max  // CLOCK_MONOTONIC µs; UINT64_MAX: none
            _ = sd.busGetTimeout(b, &until)
            var timeout: Duration?
            if until != .max {
                var ts = timespec()
                clock_gettime(CLOCK_MONOTONIC, &ts)
                let now = UInt64(ts.tv_sec) * 1_000_000 + UInt64(ts.tv_nsec) / 1000
                timeout = .microseconds(Int64(until > now ? until - now : 0))
            }
            if stopping.wait(for: fd, events: Int16(truncatingIfNeeded: events), timeout: timeout) == .woken { return }
        }
    }

    /// Ends the listening thread at once (it holds a reference to this object until then).
    public func stop() {
        stopped.withLock { $0 = true }
        stopping.signal()
    }

    deinit {
        if let slot { _ = sd.slotUnref(slot) }
        if let bus { _ = sd.busFlushCloseUnref(bus) }
    }
}
