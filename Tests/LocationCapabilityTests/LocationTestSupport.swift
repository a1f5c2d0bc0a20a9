@testable import Config
import Foundation
@testable import HostPresence
@testable import Kit
@testable import LocationCapability
@testable import NodeCLI
@testable import Registry
@testable import Store
@testable import Support
@testable import TestSupport

extension GpsdHarness {
    var endpoint: GpsdEndpoint { GpsdEndpoint(host: "127.0.0.1", port: port) }
}

/// Reconnect quickly in tests (the defaults are for a daemon).
let fastGpsdTiming: GpsdWatcher.Timing = {
    var t = GpsdWatcher.Timing()
    t.connectTimeout = .seconds(1)
    t.initialBackoff = .milliseconds(100)
    t.maxBackoff = .milliseconds(400)
    return t
}()

func makeLocationCapability(_ endpoint: GpsdEndpoint, significantChangeMeters: Double = 0,
                            minInterval: Duration = .zero) -> LocationCapability {
    LocationCapability(settings: LocationSettings(endpoint: endpoint, significantChangeMeters: significantChangeMeters,
                                                  significantChangeMinInterval: minInterval),
                       timing: fastGpsdTiming)
}

/// Runs location.get the way the dispatcher would (params validated first).
func locationGet(_ cap: LocationCapability, _ params: LocationGetParams = LocationGetParams(),
                 deadline: ContinuousClock.Instant? = nil) async -> Result<JSONValue, NodeError> {
    do throws(NodeError) {
        let p = try params.validated()
        let ctx = InvocationContext(invokeId: "t-\(UUID().uuidString.prefix(6))", command: "location.get",
                                    deadline: deadline, maxPayloadBytes: 1 << 20)
        return .success(try CommandResult.encode(try await cap.get(p, ctx), command: "location.get"))
    } catch {
        return .failure(error)
    }
}

/// No `null` (or non-finite number) anywhere in a payload.
func containsNullOrNaN(_ v: JSONValue) -> Bool {
    switch v {
    case .null: return true
    case .number(let n): return !n.isFinite
    case .array(let a): return a.contains(where: containsNullOrNaN)
    case .object(let o): return o.values.contains(where: containsNullOrNaN)
    default: return false
    }
}

func elapsedSeconds(since start: ContinuousClock.Instant) -> Double {
    let d = ContinuousClock.now - start
    return Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
}
