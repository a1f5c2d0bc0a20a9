/// The string the device key signs in `connect` (docs/PROTOCOL.md §2.4). Fields are joined with
/// `|` in this exact order; v3 adds platform and deviceFamily, trimmed and ASCII-lower-cased.
public enum DeviceAuthPayload {
    public enum Version: String, Sendable { case v2, v3 }

    public static func build(version: Version, deviceId: String, clientId: String, clientMode: String, role: String,
                             scopes: [String], signedAtMs: Int64, token: String?, nonce: String,
                             platform: String? = nil, deviceFamily: String? = nil) -> String {
        var parts = [version.rawValue, deviceId, clientId, clientMode, role, scopes.joined(separator: ","),
                     String(signedAtMs), token ?? "", nonce]
        if version == .v3 { parts += [normalizeMetadata(platform), normalizeMetadata(deviceFamily)] }
        return parts.joined(separator: "|")
    }

    /// Trim, then lower-case A–Z only (non-ASCII letters stay as they are, like the gateway does).
    public static func normalizeMetadata(_ s: String?) -> String {
        guard let s else { return "" }
        let trimmed = s.trimmed()
        return String(String.UnicodeScalarView(trimmed.unicodeScalars.map { c in
            (65...90).contains(c.value) ? Unicode.Scalar(c.value + 32)! : c
        }))
    }
}

import Config
import Glibc
import Kit
import Store
import Support
