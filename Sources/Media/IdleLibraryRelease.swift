import Support

/// How long FFmpeg's libraries (libswscale for stills, libavcodec/libavformat for video, and the
/// libavutil both bring) stay loaded after their last use: `node.releaseIdleLibrariesAfter`, which
/// the node hands each bundle in its CapabilityContext and the bundles that use Media set here
/// when they are made. nil keeps them loaded for the life of the process.
public enum IdleLibraryRelease {
    private static let period = Locked<Duration?>(.seconds(600))
    private static let log = Logger(component: "media")

    public static var after: Duration? {
        get { period.withLock { $0 } }
        set { period.withLock { $0 = newValue } }
    }

    /// After a set of libraries was let go: gives the heap their codecs' freed buffers back.
    public static func librariesReleased(_ names: String) {
        HeapTrim.returnFreeMemory()
        log.info("\(names) released after \(after ?? .zero) unused (loaded again on next use)")
    }
}
