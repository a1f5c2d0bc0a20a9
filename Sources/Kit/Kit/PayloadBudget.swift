/// How much a result may carry within what the caller's transport accepts (the gateway's
/// `policy.maxPayload`, the control socket's limit): the one place that says whether an encoded
/// result fits, and the one error it ends with when it does not. Services size their media with it
/// (a JPEG's base64, an MP4's bytes); the gateway connection checks the finished frame with it.
public struct PayloadBudget: Sendable, Equatable {
    /// Largest JSON payload the transport accepts.
    public let maxPayloadBytes: Int

    /// Room for the rest of the result frame (ids, the other payload fields, JSON quoting).
    public static let envelopeReserve = 4096
    /// Photos stay under 5 MB of base64 like the mobile nodes (docs/PROTOCOL.md §6.3).
    public static let stillImageCap = 5_000_000

    public init(maxPayloadBytes: Int) { self.maxPayloadBytes = maxPayloadBytes }

    /// Base64 text the result's media field may hold.
    public var base64Bytes: Int { max(0, maxPayloadBytes - Self.envelopeReserve) }
    /// The same, and at most `cap` (a command's own ceiling).
    public func base64Bytes(cappedAt cap: Int) -> Int { min(cap, base64Bytes) }
    /// Base64 a still image may hold: the budget, at most `stillImageCap`.
    public var stillImageBase64Bytes: Int { base64Bytes(cappedAt: Self.stillImageCap) }
    /// Raw media bytes (an MP4) whose base64 fits.
    public var mediaBytes: Int { Self.rawBytes(fittingBase64: base64Bytes) }

    /// Length of the padded base64 text for `byteCount` bytes.
    public static func base64Length(of byteCount: Int) -> Int { (byteCount + 2) / 3 * 4 }
    /// Largest byte count whose base64 text fits in `base64Bytes`.
    public static func rawBytes(fittingBase64 base64Bytes: Int) -> Int { max(0, base64Bytes / 4 * 3) }

    /// Whether `byteCount` raw bytes, as base64, fit in `base64Budget`.
    public static func fits(bytes byteCount: Int, base64Budget: Int) -> Bool { base64Length(of: byteCount) <= base64Budget }

    /// The one error a result that does not fit ends with (PAYLOAD_TOO_LARGE); `what` says what to change.
    public static func tooLarge(_ what: String) -> NodeError { NodeError(.payloadTooLarge, what) }

    /// A finished result frame of `frameBytes` bytes for `command`, checked against the limit itself.
    public func check(frameBytes: Int, command: String) throws(NodeError) {
        guard frameBytes > maxPayloadBytes else { return }
        throw Self.tooLarge("the result of \(command) is \(frameBytes) bytes; the gateway accepts at most \(maxPayloadBytes)")
    }
}

/// The dispatcher's deadline as a service may read it: to plan (bound its own waits by it, refuse
/// up front work that cannot finish in time), never to enforce it — the dispatcher cancels the call
/// and answers TIMEOUT, in one place.
public struct InvokeDeadline: Sendable, Equatable {
    /// nil: no deadline.
    public let instant: ContinuousClock.Instant?

    public init(_ instant: ContinuousClock.Instant?) { self.instant = instant }

    /// Time left now (nil: no deadline).
    public var timeLeft: Duration? { instant.map { ContinuousClock.now.duration(to: $0) } }

    /// `own` limit, shortened to end `margin` before the deadline, and never below `floor`.
    public func bounding(_ own: Duration, endingBefore margin: Duration, atLeast floor: Duration) -> Duration {
        guard let left = timeLeft else { return own }
        return max(floor, min(own, left - margin))
    }

    /// `own` end, or `margin` before the deadline when that is earlier.
    public func earliest(_ own: ContinuousClock.Instant, endingBefore margin: Duration) -> ContinuousClock.Instant {
        guard let instant else { return own }
        return min(own, instant - margin)
    }

    /// INVALID_REQUEST when a recording of `durationMs` (plus `margin` to start and encode it)
    /// cannot finish before the deadline: refused up front rather than cut off by it.
    public func requireRoom(forDurationMs durationMs: Int, margin: Duration = .seconds(2)) throws(NodeError) {
        guard let left = timeLeft else { return }
        let needed = Duration.milliseconds(durationMs) + margin
        if left < needed {
            throw NodeError.invalidRequest("durationMs \(durationMs) does not fit the invoke timeout; " +
                                           "allow at least \(needed.milliseconds) ms (timeoutMs / --timeout)")
        }
    }
}

extension InvocationContext {
    /// What the result may carry on the caller's transport.
    public var payloadBudget: PayloadBudget { PayloadBudget(maxPayloadBytes: maxPayloadBytes) }
    /// The deadline, for planning (see InvokeDeadline).
    public var invokeDeadline: InvokeDeadline { InvokeDeadline(deadline) }
}
