import Config
import Kit
import Support

/// location.get's decision path, in the order the protocol describes it (iOS LocationService):
/// a cached fix younger than maxAgeMs → gpsd reachable? → a GPS device? → wait for a fix the
/// accuracy mode accepts until the timeout → LOCATION_TIMEOUT (or the best fix, for precise).
struct LocationLocator: Sendable {
    let client: GpsdClient
    /// How long a request waits for a (re)connect before calling gpsd unreachable.
    var connectWait: Duration = .seconds(3)
    /// The answer must beat the dispatcher's own deadline, so LOCATION_TIMEOUT (which says why)
    /// wins over the generic TIMEOUT.
    var deadlineMargin: Duration = .milliseconds(50)

    func locate(_ p: LocationGetParams, deadline invokeDeadline: ContinuousClock.Instant?) async throws(NodeError) -> GpsFix {
        let mode = p.accuracy
        let start = ContinuousClock.now
        await client.start()

        // A cached fix the caller allows (it must still meet the requested accuracy bound).
        if let maxAge = p.maxAge, let cached = await client.latestFix, start - cached.receivedAt <= maxAge,
           mode.accepts(cached) || mode.acceptsAsFallback(cached) {
            return cached
        }

        let deadline = InvokeDeadline(invokeDeadline).earliest(start + p.timeout, endingBefore: deadlineMargin)

        let status = await client.awaitConnection(until: min(deadline, start + connectWait))
        if status != .connected {
            throw LocationErrors.gpsdUnreachable(client.endpoint, status: status)
        }
        if let devices = await client.devices, devices.isEmpty {
            throw LocationErrors.noDevice(client.endpoint)
        }

        switch await client.waitForFix(accuracy: mode, since: start, until: deadline) {
        case .fix(let fix):
            return fix
        case .timedOut(let best?):
            return best
        case .timedOut(nil):
            let snap = await client.snapshot
            if let devices = snap.devices, devices.isEmpty { throw LocationErrors.noDevice(client.endpoint) }
            throw LocationErrors.timeout(mode: mode, waited: ContinuousClock.now - start, snapshot: snap, endpoint: client.endpoint)
        case .unreachable(let why):
            throw LocationErrors.gpsdUnreachable(client.endpoint, status: .unreachable(why))
        case .cancelled:
            throw NodeError(.cancelled, "location.get was cancelled")
        }
    }
}

/// The LOCATION_* errors, each saying what to do (docs/PROTOCOL.md §6.2).
enum LocationErrors {
    /// No fix within the request's timeout (location's own code).
    static let timeout: NodeError.Code = "LOCATION_TIMEOUT"

    static func gpsdUnreachable(_ endpoint: GpsdEndpoint, status: GpsdClient.Status) -> NodeError {
        var why = ""
        if case .unreachable(let reason) = status { why = " (\(reason))" }
        else if status == .connecting { why = " (no answer yet)" }
        return NodeError(.unavailable("location"),
            "gpsd not running at \(endpoint)\(why). Start it with `sudo systemctl start gpsd` " +
            "(Debian package gpsd; set DEVICES in /etc/default/gpsd) or `gpsd -n /dev/ttyACM0`, " +
            "or point capabilities.location.gpsd at a running gpsd", retryable: true)
    }

    static func noDevice(_ endpoint: GpsdEndpoint) -> NodeError {
        NodeError(.unavailable("location"),
            "gpsd at \(endpoint) has no GPS device. Plug one in (gpsd's hotplug rules add it) " +
            "or add it with `gpsdctl add /dev/ttyACM0`", retryable: true)
    }

    static func badEndpoint(_ text: String) -> NodeError {
        NodeError(.unavailable("location"),
            "capabilities.location.gpsd is \"\(text)\", which is not host:port (e.g. \"127.0.0.1:2947\")")
    }

    static func timeout(mode: LocationAccuracy, waited: Duration, snapshot s: GpsdClient.Snapshot,
                        endpoint: GpsdEndpoint) -> NodeError {
        let want: String
        switch mode {
        case .precise: want = "fix"
        case .balanced, .coarse: want = "fix with an error estimate ≤ \(Int(mode.limitMeters!)) m"
        }
        let ms = Int(waited.milliseconds)
        var seen: [String] = []
        switch s.lastMode {
        case nil: seen.append("no position report yet")
        case 0?, 1?: seen.append("the receiver reports no fix")
        default:
            if let f = s.latestFix {
                let err = f.accuracyMeters.map { "±\(Int(clamping: $0.rounded(), to: 0...Int(Int32.max))) m" } ?? "no error estimate"
                seen.append("last fix \(f.mode == .threeD ? "3D" : "2D") \(err)")
            }
        }
        if let used = s.satellitesUsed {
            seen.append("\(used)\(s.satellitesSeen.map { " of \($0)" } ?? "") satellites used")
        }
        if let d = s.devices, !d.isEmpty { seen.append("device \(d.joined(separator: ", "))") }
        return NodeError(LocationErrors.timeout,
            "no \(want) within \(ms) ms (gpsd at \(endpoint): \(seen.joined(separator: ", "))). " +
            "Give the receiver a view of the sky, raise timeoutMs, or allow a cached fix with maxAgeMs",
            retryable: true)
    }
}
