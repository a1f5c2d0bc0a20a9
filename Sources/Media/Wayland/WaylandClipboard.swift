import CWaylandClient
import CWaylandProtocols
import Glibc
import Kit
import Support

/// The seat's clipboard, set by a client that has no window (wlroots' data-control protocol,
/// which KWin 5.27 offers every client too): how computer.act on KDE types text KWin's fake input
/// has no key for — it becomes the clipboard's content and Ctrl+V pastes it. The text is served to
/// each program that asks, while the connection's events are dispatched (`connection.wait`), until
/// another selection replaces it or the clipboard is closed. One thread at a time, like the
/// connection.
public final class WaylandClipboard {
    private let connection: WaylandConnection
    private let device: OpaquePointer
    private let offers: Offers
    private var source: OpaquePointer?
    private var served: Served?

    /// nil when the compositor offers no data control (or no seat).
    public init?(connection: WaylandConnection) {
        guard let manager = connection.dataControlManager, let seat = connection.seat,
              let device = zwlr_data_control_manager_v1_get_data_device(manager, seat) else { return nil }
        self.connection = connection
        self.device = device
        offers = Offers()
        // The device announces every selection (ours too) as an offer object: kept to be destroyed.
        zwlr_data_control_device_v1_add_listener(device, Self.deviceListener, Unmanaged.passUnretained(offers).toOpaque())
    }

    deinit {
        dropSource()
        for o in offers.all { zwlr_data_control_offer_v1_destroy(o) }
        zwlr_data_control_device_v1_destroy(device)
        _ = wl_display_flush(connection.display)
    }

    /// Makes `text` the clipboard's content (as UTF-8 text in the types programs ask for: GTK,
    /// Qt, and X programs through Xwayland).
    public func set(_ text: String) throws(NodeError) {
        dropSource()
        guard let manager = connection.dataControlManager, let s = zwlr_data_control_manager_v1_create_data_source(manager) else {
            throw NodeError(connection.unavailableCode, "the compositor's clipboard (data control) is not available")
        }
        let state = Served(Array(text.utf8))
        for mime in ["text/plain;charset=utf-8", "text/plain", "UTF8_STRING", "TEXT", "STRING"] { zwlr_data_control_source_v1_offer(s, mime) }
        zwlr_data_control_source_v1_add_listener(s, Self.sourceListener, Unmanaged.passUnretained(state).toOpaque())
        zwlr_data_control_device_v1_set_selection(device, s)
        source = s
        served = state
        try connection.roundtrip()
    }

    /// How many times the current text was sent to a program that asked for it.
    public var timesServed: Int { served?.count ?? 0 }

    private func dropSource() {
        if let source { zwlr_data_control_source_v1_destroy(source) }
        source = nil
        served = nil
    }

    /// The text and how often it was sent (the source's user data).
    private final class Served {
        let bytes: [UInt8]
        var count = 0
        init(_ bytes: [UInt8]) { self.bytes = bytes }
    }

    /// Offer objects the compositor created for this client.
    private final class Offers { var all: [OpaquePointer] = [] }

    nonisolated(unsafe) private static let sourceListener = WaylandListeners.make(zwlr_data_control_source_v1_listener(
        send: { data, _, _, fd in
            // A program pastes: it reads the text from the pipe it passed. Written whole, then the
            // end of file it waits for.
            defer { close(fd) }
            guard let data else { return }
            let state = Unmanaged<Served>.fromOpaque(data).takeUnretainedValue()
            if (try? SystemIO.live.writeAll(fd, state.bytes)) != nil { state.count += 1 }
        },
        cancelled: { _, _ in }))

    nonisolated(unsafe) private static let deviceListener = WaylandListeners.make(zwlr_data_control_device_v1_listener(
        data_offer: { data, _, offer in
            guard let data, let offer else { return }
            Unmanaged<Offers>.fromOpaque(data).takeUnretainedValue().all.append(offer)
        },
        selection: { _, _, _ in },
        finished: { _, _ in }))
}
