import Kit
import Support

/// The parts of a refused `connect`'s `error.details` the reconnect decision reads
/// (docs/PROTOCOL.md §3.8): every string trimmed, empty strings and lists counted as absent,
/// values of another type ignored — a gateway's odd field never costs the decision.
struct ConnectErrorDetails: Sendable, Equatable {
    enum NextStep: String, Sendable, Equatable {
        case retryWithDeviceToken = "retry_with_device_token"
        case updateAuthConfiguration = "update_auth_configuration"
        case updateAuthCredentials = "update_auth_credentials"
        case waitThenRetry = "wait_then_retry"
        case reviewAuthConfiguration = "review_auth_configuration"
    }

    /// `details.code`, trimmed; nil when absent or empty.
    let code: String?
    let recommendedNextStep: NextStep?
    let pauseReconnect: Bool?
    let retryable: Bool?
    /// A newest gateway that keeps the socket open after a pairing refusal to push the decision.
    let waitForResolution: Bool
    let object: [String: JSONValue]

    init(_ details: JSONValue?) {
        if case .object(let o)? = details { object = o } else { object = [:] }
        code = Self.string(object["code"], max: 80)
        recommendedNextStep = Self.string(object["recommendedNextStep"], max: 80).flatMap(NextStep.init(rawValue:))
        pauseReconnect = object["pauseReconnect"]?.boolValue
        retryable = object["retryable"]?.boolValue
        waitForResolution = object["waitForResolution"]?.boolValue == true
    }

    /// The code the decision matches on: `details.code`, else PAIRING_REQUIRED for NOT_PAIRED,
    /// else the top-level `error.code`.
    static func detailCode(_ e: GatewayProtocol.GatewayError) -> String {
        if let c = ConnectErrorDetails(e.details).code { return c }
        return e.code == "NOT_PAIRED" ? "PAIRING_REQUIRED" : e.code
    }

    /// A trimmed string without control characters, at most `max` characters; nil when empty.
    static func string(_ v: JSONValue?, max: Int) -> String? {
        guard let s = v?.stringValue else { return nil }
        let clean = String(String.UnicodeScalarView(s.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F })).trimmed()
        guard !clean.isEmpty else { return nil }
        return clean.count > max ? String(clean.prefix(max)) : clean
    }

    /// Non-empty trimmed strings of an array; nil when none.
    static func strings(_ v: JSONValue?) -> [String]? {
        let list = (v?.arrayValue ?? []).compactMap { string($0, max: 128) }
        return list.isEmpty ? nil : list
    }
}

/// A `PAIRING_REQUIRED` refusal's details, sanitized for the log and `status`: an operator
/// approves `requestId` (`openclaw devices approve <requestId>`).
public struct PairingRequest: Sendable, Equatable {
    public enum Reason: String, Sendable, Equatable {
        case notPaired = "not-paired", roleUpgrade = "role-upgrade", scopeUpgrade = "scope-upgrade", metadataUpgrade = "metadata-upgrade"
    }
    public let reason: Reason?
    /// Dropped (nil) unless it is ≤ 128 characters of `[A-Za-z0-9][A-Za-z0-9._:-]*`: it goes into
    /// a command line a person copies.
    public let requestId: String?
    public let remediationHint: String?
    public let deviceId: String?
    public let requestedRole: String?
    public let requestedScopes: [String]?
    public let approvedRoles: [String]?
    public let approvedScopes: [String]?

    init(_ details: JSONValue?) {
        let d = ConnectErrorDetails(details).object
        reason = ConnectErrorDetails.string(d["reason"], max: 80).flatMap(Reason.init(rawValue:))
        requestId = Self.requestId(d["requestId"]?.stringValue)
        remediationHint = ConnectErrorDetails.string(d["remediationHint"], max: 240)
        deviceId = ConnectErrorDetails.string(d["deviceId"], max: 128)
        requestedRole = ConnectErrorDetails.string(d["requestedRole"], max: 80)
        requestedScopes = ConnectErrorDetails.strings(d["requestedScopes"])
        approvedRoles = ConnectErrorDetails.strings(d["approvedRoles"])
        approvedScopes = ConnectErrorDetails.strings(d["approvedScopes"])
    }

    static func requestId(_ raw: String?) -> String? {
        guard let v = raw?.trimmed(), !v.isEmpty, v.utf8.count <= 128, let first = v.unicodeScalars.first else { return nil }
        func alnum(_ c: Unicode.Scalar) -> Bool { c.isASCII && (("a"..."z").contains(c) || ("A"..."Z").contains(c) || ("0"..."9").contains(c)) }
        guard alnum(first), v.unicodeScalars.allSatisfy({ alnum($0) || ".:_-".unicodeScalars.contains($0) }) else { return nil }
        return v
    }
}
