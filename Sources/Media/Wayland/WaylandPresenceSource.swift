import CWaylandClient
import CWaylandProtocols
import Config
import Kit
import Support

/// `presence.mode: "wayland"`: foreground unless the compositor reports that its seat has had no
/// input for `presence.idleSeconds` — through ext-idle-notify-v1 on newer compositors, else KDE's
/// org_kde_kwin_idle (sway 1.7 on Debian 12). The connection is kept and re-opened when it breaks;
/// each sample only reads what the compositor has sent since the last one.
public final class WaylandPresenceSource: PresenceSource, Sendable {
    private let socket: String?
    private let idleSeconds: Int
    /// The compositor connection and its idle watch (libwayland objects: one thread at a time).
    /// Unchecked: they never leave the lock of `link`, which is what makes them safe to share.
    private struct Link: @unchecked Sendable {
        var connection: WaylandConnection?
        var watch: IdleWatch?
    }
    private let link = Locked(Link())

    public init(config: NodeConfig.Presence) {
        socket = config.display ?? ProcessEnvironment.current["WAYLAND_DISPLAY"]
        idleSeconds = config.idleSeconds
    }

    public func sample() async -> PresenceSample { link.withLock { sampleLocked(&$0) } }

    private func sampleLocked(_ link: inout Link) -> PresenceSample {
        guard let socket else {
            return PresenceSample(.background, "presence.mode is wayland but no compositor is known (WAYLAND_DISPLAY is unset and presence.display is not set)")
        }
        if let c = link.connection, !c.pump() { link.watch = nil; link.connection = nil }
        if link.connection == nil {
            do {
                let c = try WaylandConnection(socket: socket, unavailableCode: .unavailable("presence"))
                guard let w = IdleWatch(connection: c, timeoutMs: UInt32(min(idleSeconds, Int(UInt32.max / 1000)) * 1000)) else {
                    return PresenceSample(.background, "the Wayland compositor at \(socket) offers no idle protocol (ext-idle-notify-v1 or org_kde_kwin_idle)")
                }
                link.connection = c
                link.watch = w
                _ = c.pump()
            } catch {
                return PresenceSample(.background, "Wayland compositor at \(socket): \(error.message)")
            }
        }
        guard let watch = link.watch else { return PresenceSample(.background, "no idle watch") }
        return watch.idle
            ? PresenceSample(.background, "no input on the Wayland seat for \(idleSeconds) s (\(watch.protocolName))")
            : PresenceSample(.foreground, "input on the Wayland seat within \(idleSeconds) s (\(watch.protocolName))")
    }
}

/// One idle timeout registered with the compositor, and whether it has fired since the last input.
final class IdleWatch {
    private(set) var idle = false
    let protocolName: String
    private let object: OpaquePointer
    private let kde: Bool
    /// Held so the display outlives the proxy (destroying it needs the connection).
    private let connection: WaylandConnection

    init?(connection c: WaylandConnection, timeoutMs: UInt32) {
        connection = c
        guard let seat = c.seat else { return nil }
        if let notifier = c.idleNotifier, let n = ext_idle_notifier_v1_get_idle_notification(notifier, timeoutMs, seat) {
            object = n; kde = false; protocolName = "ext-idle-notify-v1"
            ext_idle_notification_v1_add_listener(n, IdleWatch.notifyListener, Unmanaged.passUnretained(self).toOpaque())
        } else if let kdeIdle = c.kdeIdle, let t = org_kde_kwin_idle_get_idle_timeout(kdeIdle, seat, timeoutMs) {
            object = t; kde = true; protocolName = "org_kde_kwin_idle"
            org_kde_kwin_idle_timeout_add_listener(t, IdleWatch.kdeListener, Unmanaged.passUnretained(self).toOpaque())
        } else {
            return nil
        }
    }

    deinit { if kde { org_kde_kwin_idle_timeout_release(object) } else { ext_idle_notification_v1_destroy(object) } }

    private static func watch(_ data: UnsafeMutableRawPointer?) -> IdleWatch? {
        data.map { Unmanaged<IdleWatch>.fromOpaque($0).takeUnretainedValue() }
    }

    nonisolated(unsafe) static let notifyListener = WaylandListeners.make(ext_idle_notification_v1_listener(
        idled: { data, _ in watch(data)?.idle = true },
        resumed: { data, _ in watch(data)?.idle = false }))

    nonisolated(unsafe) static let kdeListener = WaylandListeners.make(org_kde_kwin_idle_timeout_listener(
        idle: { data, _ in watch(data)?.idle = true },
        resumed: { data, _ in watch(data)?.idle = false }))
}
