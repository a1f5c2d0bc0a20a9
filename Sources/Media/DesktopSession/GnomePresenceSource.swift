import Config
import Kit
import Support

/// `presence.mode: "gnome"`: foreground unless GNOME's idle monitor (org.gnome.Mutter.IdleMonitor)
/// says nobody has used the keyboard or mouse for `presence.idleSeconds`. The node's own
/// computer.act input counts as activity for GNOME, not for presence: activity GNOME places
/// within the node's last injection (from sending it to seeing the idle monitor have it) is not a person's,
/// so the person's last activity stays where it was. A person's input that a later injection
/// of the node hides before the next sample (every 2 s) is missed.
public final class GnomePresenceSource: PresenceSource, Sendable {
    public static let service = "org.gnome.Mutter.IdleMonitor"
    private let address: String?
    private let idleMs: UInt64

    /// Unchecked: the bus connection (sd-bus, one thread at a time) never leaves the lock of `state`.
    private struct State: @unchecked Sendable {
        var bus: SessionBus?
        /// When a person last used the session (monotonic ms), as far as the samples tell.
        var personSeenMs: UInt64?
    }
    private let state = Locked(State())

    public init(config: NodeConfig.Presence, environment: [String: String] = ProcessEnvironment.current) {
        address = SessionBus.sessionAddress(environment: environment)
        idleMs = UInt64(config.idleSeconds) * 1000
        InjectedInput.tracking = true
    }

    public func sample() async -> PresenceSample { state.withLock { sample(&$0) } }

    private func sample(_ s: inout State) -> PresenceSample {
        guard let address else {
            return PresenceSample(.background, "presence.mode is gnome but no session bus is known (DBUS_SESSION_BUS_ADDRESS is unset and XDG_RUNTIME_DIR has no bus)")
        }
        let idle: UInt64
        let before: UInt64
        do throws(SessionBus.Failure) {
            if s.bus == nil { s.bus = try SessionBus(address: address) }
            guard let bus = s.bus else { return PresenceSample(.background, "no session bus") }
            before = InjectedInput.nowMs()
            let reply = try bus.call(Self.service, "/org/gnome/Mutter/IdleMonitor/Core", Self.service, "GetIdletime", timeout: .seconds(2))
            guard let ms = reply.first?.int, ms >= 0 else { return PresenceSample(.background, "GNOME's idle monitor answered without a time") }
            idle = UInt64(ms)
        } catch {
            s.bus = nil
            return PresenceSample(.background, "GNOME's idle monitor cannot be asked: \(error.description)")
        }
        // GNOME measured the idle time somewhere inside the call: the activity lies between
        // these two (a busy machine makes them tens of milliseconds apart).
        let now = InjectedInput.nowMs()
        let activity = now >= idle ? now - idle : 0
        let ours = InjectedInput.isOwn(activityBetween: before >= idle ? before - idle : 0, and: activity)
        if !ours || s.personSeenMs == nil {
            // A person's input (or, at the first sample, the best that is known).
            s.personSeenMs = max(s.personSeenMs ?? 0, ours ? 0 : activity)
        }
        let personIdle = now - min(now, s.personSeenMs ?? 0)
        return personIdle >= idleMs
            ? PresenceSample(.background, "no keyboard or mouse input in GNOME for \(personIdle / 1000) s (the node's own input not counted)")
            : PresenceSample(.foreground, "keyboard or mouse input in GNOME \(personIdle / 1000) s ago")
    }
}
