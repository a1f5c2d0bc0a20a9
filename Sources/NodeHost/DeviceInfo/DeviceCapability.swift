import Config
import Glibc
import Kit
import Registry
import Support

/// The built-in `device` capability: `device.info` and `device.status`, with the payload shapes
/// of the iOS/Android nodes, filled from procfs, sysfs and /etc. Always available, because every
/// source degrades to a sensible default rather than failing.
public struct DeviceCapability: Capability {
    public var manifest: BundleManifest { BuiltInManifest.device }
    /// Where /proc, /sys and /etc are read from; tests point this at a fixture tree.
    public let sysRoot: String
    /// A path on the filesystem whose space `device.status` reports (the node's state dir).
    public let storagePath: String
    /// Locale variables are taken from here, so tests need not change the process environment.
    public let environment: [String: String]

    public init(sysRoot: String = "/", storagePath: String = "/",
                environment: [String: String] = ProcessEnvironment.current) {
        self.sysRoot = sysRoot
        self.storagePath = storagePath
        self.environment = environment
    }

    public var handlers: [CommandHandler] { DeviceCommand.handlers(self) }

    public func availability() async -> Availability { .available }

    /// `{deviceName, modelIdentifier, systemName, systemVersion, appVersion, appBuild, locale}`.
    public func infoPayload() -> DeviceInfoResult {
        let sys = SysRoot(sysRoot)
        let info = LinuxSystemInfo(sys: sys)
        let osRelease = info.osRelease
        return DeviceInfoResult(
            deviceName: info.hostname, modelIdentifier: info.modelIdentifier,
            systemName: LinuxSystemInfo.systemName(osRelease),
            systemVersion: LinuxSystemInfo.systemVersion(osRelease, kernel: info.kernelRelease),
            appVersion: NodeVersion.version, appBuild: NodeVersion.build,
            locale: LocaleResolver.resolve(environment: environment, sys: sys))
    }

    /// `{battery, thermal, storage, network, uptimeSeconds}`.
    public func statusPayload() -> DeviceStatusResult {
        let sys = SysRoot(sysRoot)
        return DeviceStatusResult(
            battery: PowerSupplyReader(sys: sys).read(),
            thermal: .init(state: ThermalReader(sys: sys).read().name),
            storage: StorageReader.read(path: storagePath),
            network: NetworkInterfacesReader(sys: sys).read(),
            uptimeSeconds: UptimeReader(sys: sys).read())
    }
}
