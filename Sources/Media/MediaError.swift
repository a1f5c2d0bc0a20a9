/// Why a media operation failed. The capability turns this into its own error code
/// (SCREEN_UNAVAILABLE, CAMERA_UNAVAILABLE, PAYLOAD_TOO_LARGE, …).
public struct MediaError: Error, Sendable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// The input cannot be handled (pixel layout, size, missing codec).
        case unsupported
        /// A library call failed.
        case codec
        /// The result cannot be made to fit the byte budget it was given.
        case tooLarge
    }

    public let kind: Kind
    public let description: String

    public init(_ kind: Kind, _ description: String) {
        self.kind = kind
        self.description = description
    }
}
