import CSystemd
import Config
import FoundationEssentials
import Glibc
import HostPresence
import Kit
import Registry
import Store
import Support

/// Listens for logind's PrepareForSleep(false) — the system just resumed — on the system bus.
/// After a suspend the gateway connection is usually dead while the node still thinks it is up;
/// this lets the node check it at once and announce itself (node.presence.alive).
public final class SleepMonitor: @unchecked Sendable {
    private var bus: OpaquePointer?
    private var slot: OpaquePointer?
    private let onResume: @Sendable () -> Void
    private let lock = Lock()
    private var stopped = false

    /// nil without a system bus (containers, minimal images): resume detection is then off.
    public init?(onResume: @escaping @Sendable () -> Void) {
        self.onResume = onResume
        var b: OpaquePointer?
        guard sd_bus_open_system(&b) >= 0, let b else { return nil }
        bus = b
        let me = Unmanaged.passUnretained(self).toOpaque()
        let r = sd_bus_match_signal(b, &slot, "org.freedesktop.login1", "/org/freedesktop/login1",
                                    "org.freedesktop.login1.Manager", "PrepareForSleep", { m, userdata, _ in
            var going: Int32 = 0
            guard let m, csystemd_read_bool(m, &going) >= 0, going == 0, let userdata else { return 0 }
            Unmanaged<SleepMonitor>.fromOpaque(userdata).takeUnretainedValue().onResume()
            return 0
        }, me)
        guard r >= 0 else { sd_bus_unref(b); bus = nil; return nil }
        DetachedThread.start(name: "sleep-monitor") { [weak self] in self?.loop() }
    }

    private func loop() {
        while true {
            let (b, done) = lock.withLock { (bus, stopped) }
            guard let b, !done else { return }
            let r = sd_bus_process(b, nil)
            if r < 0 { return }
            if r > 0 { continue }
            // Wake at least every second so stop() is noticed.
            if sd_bus_wait(b, 1_000_000) < 0 { return }
        }
    }

    /// Ends the listening thread within a second (it holds a reference to this object until then).
    public func stop() { lock.withLock { stopped = true } }

    deinit {
        if let slot { sd_bus_slot_unref(slot) }
        if let bus { sd_bus_flush_close_unref(bus) }
    }
}
