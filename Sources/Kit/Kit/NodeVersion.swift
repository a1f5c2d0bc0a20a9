import CBundleABI

/// The node's own version, reported as `appVersion`/`appBuild` by `device.info` and reused by the
/// connect frame, `--version` and doctor so every surface agrees on one number.
public enum NodeVersion {
    /// Semantic version of the release.
    public static let version = OPENCLAW_NODE_VERSION
    /// Monotonic build number (the iOS/Android `CFBundleVersion`/`versionCode` counterpart).
    public static let build = OPENCLAW_NODE_BUILD
}
