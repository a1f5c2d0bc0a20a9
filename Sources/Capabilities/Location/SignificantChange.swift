import Config
import Kit
import Support

/// A `location.update` node event: sent when the device has moved more than
/// `capabilities.location.significantChangeMeters` (the iOS node's significant-change events).
/// `payload` has the location.get shape (precise), so the gateway can read it the same way.
public struct LocationUpdate: Sendable {
    public let fix: GpsFix
    /// Distance from the previous update (nil for the first one after start-up).
    public let movedMeters: Double?
    public var event: NodeEvent { .locationUpdate }
    public var payload: JSONValue { LocationPayload.make(fix, accuracy: .precise) }
}

/// Decides which fixes are significant changes. Pure (times come from the fixes), so tests
/// drive it with made-up fixes.
///   - the first usable fix is one (the gateway learns where the node is);
///   - then a fix farther than `thresholdMeters` from the last reported one, but at most one per
///     `minInterval`: a move seen during the quiet time is reported when it ends (if still away);
///   - a fix whose error estimate is larger than the threshold is ignored, so GPS noise on a
///     parked device cannot look like a move.
struct SignificantChangeFilter: Sendable {
    let thresholdMeters: Double
    let minInterval: Duration
    private(set) var lastReported: GpsFix?

    init(thresholdMeters: Double, minInterval: Duration) {
        self.thresholdMeters = thresholdMeters
        self.minInterval = minInterval
    }

    mutating func offer(_ fix: GpsFix) -> LocationUpdate? {
        guard thresholdMeters > 0 else { return nil }
        guard (fix.accuracyMeters ?? LocationAccuracy.unknownAccuracyMeters) <= thresholdMeters else { return nil }
        guard let last = lastReported else {
            lastReported = fix
            return LocationUpdate(fix: fix, movedMeters: nil)
        }
        let moved = fix.distance(to: last)
        guard moved > thresholdMeters, fix.receivedAt - last.receivedAt >= minInterval else { return nil }
        lastReported = fix
        return LocationUpdate(fix: fix, movedMeters: moved)
    }
}

/// Runs the filter over the client's fixes and fans the updates out to every subscriber.
actor SignificantChangeMonitor {
    private var filter: SignificantChangeFilter
    private var task: Task<Void, Never>?
    private var nextId: UInt64 = 0
    private var subscribers: [UInt64: AsyncStream<LocationUpdate>.Continuation] = [:]
    /// The last update sent, for a subscriber that comes after it: the daemon subscribes once its
    /// gateway session is set up, and the first fix may well be in before that.
    private var latest: LocationUpdate?
    private let log: Logger

    init(thresholdMeters: Double, minInterval: Duration, log: Logger) {
        filter = SignificantChangeFilter(thresholdMeters: thresholdMeters, minInterval: minInterval)
        self.log = log
    }

    var isEnabled: Bool { filter.thresholdMeters > 0 }

    func start(_ client: GpsdClient) async {
        guard isEnabled, task == nil else { return }
        let fixes = await client.fixes()
        task = Task { [weak self] in
            for await fix in fixes { await self?.consider(fix) }
        }
    }

    func stop() {
        task?.cancel()
        task = nil
        for (_, s) in subscribers { s.finish() }
        subscribers.removeAll()
        latest = nil
    }

    func subscribe() -> AsyncStream<LocationUpdate> {
        nextId += 1
        let id = nextId
        let (stream, continuation) = AsyncStream.makeStream(of: LocationUpdate.self, bufferingPolicy: .bufferingNewest(8))
        subscribers[id] = continuation
        if let latest { continuation.yield(latest) }
        continuation.onTermination = { _ in Task { [weak self] in await self?.unsubscribe(id) } }
        return stream
    }

    private func unsubscribe(_ id: UInt64) { subscribers.removeValue(forKey: id) }

    private func consider(_ fix: GpsFix) {
        guard let update = filter.offer(fix) else { return }
        log.debug("significant location change\(update.movedMeters.map { ": moved \(Int($0)) m" } ?? " (first fix)")")
        latest = update
        for (_, s) in subscribers { s.yield(update) }
    }
}
