import Media

/// How much of the gateway's maxPayload the base64 media may use.
enum PayloadBudget {
    /// Room for the rest of the result frame (ids, the other payload fields, JSON quoting).
    static let envelopeReserve = 4096
    /// Photos stay under 5 MB of base64 like the mobile nodes (docs/PROTOCOL.md §6.3).
    static let stillImageCap = 5_000_000

    static func stillImageBase64(maxPayloadBytes: Int) -> Int {
        min(stillImageCap, max(0, maxPayloadBytes - envelopeReserve))
    }

    static func videoBytes(maxPayloadBytes: Int) -> Int {
        Base64Size.rawBytes(fitting: max(0, maxPayloadBytes - envelopeReserve))
    }
}
