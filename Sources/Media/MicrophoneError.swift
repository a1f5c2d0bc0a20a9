import Glibc
import Kit

/// Why the microphone could not be used. Capabilities decide what each kind means for them:
/// screen.record records without audio when the device is unavailable, and reports MIC_BUSY when
/// another program holds it.
public struct MicrophoneError: Error, Sendable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// No such PCM, no sound hardware, or the device refused every format we can use.
        case unavailable
        /// Another program has the device open (EBUSY).
        case busy
        /// Capture started but a read failed and could not be recovered (device unplugged).
        case failed
    }

    public let kind: Kind
    public let description: String

    public init(_ kind: Kind, _ description: String) {
        self.kind = kind
        self.description = description
    }

    /// The error code a capability reports for `.busy`.
    public static let busyCode = NodeError.Code.micBusy

    /// Kind for a negative alsa-lib return code from opening or configuring a device.
    public static func kind(forOpenError rc: Int32) -> Kind { rc == -EBUSY ? .busy : .unavailable }

    static func alsa(_ lib: ALSALibrary, _ what: String, device: String, _ rc: Int32, kind: Kind? = nil) -> MicrophoneError {
        let text = lib.describe(rc)
        return MicrophoneError(kind ?? MicrophoneError.kind(forOpenError: rc), "ALSA device \"\(device)\": \(what): \(text)")
    }
}
