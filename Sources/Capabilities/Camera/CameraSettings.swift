import Config
import Glibc
import Kit
import Support

/// `capabilities.camera` plus the environment it depends on, read once at start-up.
struct CameraSettings: Sendable {
    /// Where the /dev/video* nodes are. OPENCLAW_NODE_CAMERA_DIR moves it (tests point it at a
    /// directory of placeholder files the LD_PRELOAD fake answers for; also containers that bind
    /// devices elsewhere).
    var deviceDir = "/dev"
    /// `capabilities.camera.device`: the camera used when a command names none.
    var defaultDevice: String?
    /// How long a camera stays open after a snap, so the next one skips opening and warm-up.
    var idleRelease: Duration = .seconds(5)
    /// ALSA PCM for camera.clip's includeAudio: $OPENCLAW_NODE_AUDIO_DEVICE, else "default" (the
    /// same variable as screen.record's; not a config key, the config schema has no audio device yet).
    var audioDevice = "default"
    /// Where sysfs is (camera sides come from physical_location); OPENCLAW_NODE_SYSFS moves it for tests.
    var sysfsRoot = "/sys"
    /// `capabilities.camera.warmup`: whether a new stream's first frames are thrown away only on
    /// cameras that report automatic exposure, gain or white balance, or on all.
    var warmup: CameraWarmupMode = .auto
    /// `capabilities.camera.backend`: which code serves which camera.
    var backend: CameraBackend = .auto
    /// Where the bundle's library is (libopenclaw-libcamera.so is installed beside it).
    var libraryDirectory: String?
    /// Where rpicam-apps are looked for: the daemon's PATH.
    var toolPath = "/usr/local/bin:/usr/bin:/bin"

    init(deviceDir: String = "/dev", defaultDevice: String? = nil, idleRelease: Duration = .seconds(5),
         audioDevice: String = "default", warmup: CameraWarmupMode = .auto) {
        self.deviceDir = deviceDir
        self.defaultDevice = defaultDevice
        self.idleRelease = idleRelease
        self.audioDevice = audioDevice
        self.warmup = warmup
    }

    init(_ section: BundleSection, environment env: [String: String]) {
        deviceDir = env["OPENCLAW_NODE_CAMERA_DIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/dev"
        defaultDevice = section.string("device").flatMap { $0.isEmpty ? nil : $0 }
        warmup = section.string("warmup").flatMap(CameraWarmupMode.init(rawValue:)) ?? .auto
        backend = section.string("backend").flatMap(CameraBackend.init(rawValue:)) ?? .auto
        toolPath = env["PATH"].flatMap { $0.isEmpty ? nil : $0 } ?? toolPath
        audioDevice = env["OPENCLAW_NODE_AUDIO_DEVICE"].flatMap { $0.isEmpty ? nil : $0 } ?? "default"
        sysfsRoot = env["OPENCLAW_NODE_SYSFS"].flatMap { $0.isEmpty ? nil : $0 } ?? "/sys"
        if let ms = env["OPENCLAW_NODE_CAMERA_IDLE_MS"].flatMap(Int.init), ms >= 0 { idleRelease = .milliseconds(ms) }
    }
}

/// `capabilities.camera.backend`.
enum CameraBackend: String, Sendable {
    /// V4L2 for USB cameras; a Raspberry Pi's CSI cameras through rpicam-apps when installed.
    case auto
    /// V4L2 only (CSI cameras are not listed; their pipeline nodes are still skipped).
    case v4l2
    /// CSI cameras through rpicam-apps, even where sysfs shows no Pi receiver.
    case rpicam
    /// libcamera in process: not in this release.
    case libcamera
}
