@testable import Config
@testable import DeviceInfo
import Foundation
@testable import HostPresence
@testable import Kit
@testable import NodeCLI
@testable import Registry
@testable import Store
@testable import Support
@testable import TestSupport
import Testing

/// A throwaway directory tree standing in for "/" (procfs, sysfs, /etc), removed when released.
private final class FixtureRoot {
    let root: String

    init() throws {
        root = NSTemporaryDirectory() + "device-fixture-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    func write(_ path: String, _ contents: String) throws {
        let full = root + path
        try FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent,
                                                withIntermediateDirectories: true)
        try contents.write(toFile: full, atomically: false, encoding: .utf8)
    }

    func mkdir(_ path: String) throws {
        try FileManager.default.createDirectory(atPath: root + path, withIntermediateDirectories: true)
    }

    func symlink(_ path: String, to target: String) throws {
        try FileManager.default.createDirectory(atPath: ((root + path) as NSString).deletingLastPathComponent,
                                                withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: root + path, withDestinationPath: target)
    }

    /// A power_supply entry: every key becomes one sysfs attribute file.
    func powerSupply(_ name: String, _ attributes: [String: String]) throws {
        for (key, value) in attributes { try write("/sys/class/power_supply/\(name)/\(key)", value + "\n") }
    }

    func thermalZone(_ index: Int, milliC: Int, trips: [(String, Int)] = []) throws {
        let dir = "/sys/class/thermal/thermal_zone\(index)/"
        try write(dir + "temp", "\(milliC)\n")
        try write(dir + "type", "acpitz\n")
        for (i, trip) in trips.enumerated() {
            try write(dir + "trip_point_\(i)_type", trip.0 + "\n")
            try write(dir + "trip_point_\(i)_temp", "\(trip.1)\n")
        }
    }

    enum NetKind { case wifi, wired, veth, wwan, bridge(lowers: [String]) }

    func interface(_ name: String, _ kind: NetKind, up: Bool) throws {
        let dir = "/sys/class/net/\(name)/"
        try write(dir + "operstate", up ? "up\n" : "down\n")
        try write(dir + "type", "1\n")
        try write(dir + "uevent", "INTERFACE=\(name)\nIFINDEX=3\n")
        switch kind {
        case .wifi:
            try mkdir("/sys/devices/pci0000:00/0000:00:14.3")
            try symlink(dir + "device", to: root + "/sys/devices/pci0000:00/0000:00:14.3")
            try mkdir(dir + "wireless")
            try mkdir(dir + "phy80211")
            try write(dir + "uevent", "DEVTYPE=wlan\nINTERFACE=\(name)\n")
        case .wired:
            try mkdir("/sys/devices/pci0000:00/0000:00:1f.6")
            try symlink(dir + "device", to: root + "/sys/devices/pci0000:00/0000:00:1f.6")
        case .veth:
            break
        case .wwan:
            try mkdir("/sys/devices/usb1/1-6")
            try symlink(dir + "device", to: root + "/sys/devices/usb1/1-6")
            try write(dir + "type", "519\n")
            try write(dir + "uevent", "DEVTYPE=wwan\nINTERFACE=\(name)\n")
        case .bridge(let lowers):
            try mkdir(dir + "bridge")
            try write(dir + "uevent", "DEVTYPE=bridge\nINTERFACE=\(name)\n")
            for lower in lowers { try symlink(dir + "lower_\(lower)", to: root + "/sys/class/net/\(lower)") }
        }
    }

    func loopback() throws {
        try write("/sys/class/net/lo/operstate", "unknown\n")
        try write("/sys/class/net/lo/carrier", "1\n")
        try write("/sys/class/net/lo/type", "772\n")
    }

    static let routeHeader = "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"

    /// /proc/net/route with a default route via `iface` (nil: only the on-link LAN route).
    func ipv4Routes(defaultVia iface: String?, lan: String = "eth0") throws {
        var text = Self.routeHeader
        if let iface { text += "\(iface)\t00000000\t0102A8C0\t0003\t0\t0\t100\t00000000\t0\t0\t0\n" }
        text += "\(lan)\t0002A8C0\t00000000\t0001\t0\t0\t100\t00FFFFFF\t0\t0\t0\n"
        try write("/proc/net/route", text)
    }

    /// /proc/net/ipv6_route always has the kernel's "unreachable" ::/0 reject route on lo.
    func ipv6Routes(defaultVia iface: String?) throws {
        let zero = String(repeating: "0", count: 32)
        var text = "fe800000000000000000000000000000 40 \(zero) 00 \(zero) 00000100 00000001 00000000 00000001     eth0\n"
        if let iface {
            text += "\(zero) 00 \(zero) 00 fe800000000000000000000000000001 00000400 00000002 00000000 00000003 \(iface)\n"
        }
        text += "\(zero) 00 \(zero) 00 \(zero) ffffffff 00000001 00000000 00200200       lo\n"
        try write("/proc/net/ipv6_route", text)
    }
}

private func invoke(_ cap: DeviceCapability, _ command: String) async throws -> JSONValue {
    try await runCommand(cap, command)
}

private func status(_ fx: FixtureRoot) async throws -> JSONValue {
    try await invoke(DeviceCapability(sysRoot: fx.root, storagePath: fx.root, environment: [:]), "device.status")
}

private func info(_ fx: FixtureRoot, env: [String: String] = [:]) async throws -> JSONValue {
    try await invoke(DeviceCapability(sysRoot: fx.root, storagePath: fx.root, environment: env), "device.info")
}

@Suite("Device capability: command table")
struct DeviceCommandTableTests {
    @Test func specsAreOpenToEveryGate() {
        let cap = DeviceCapability()
        #expect(cap.name == "device")
        #expect(cap.commands.map(\.name) == ["device.info", "device.status"])
        for spec in cap.commands {
            #expect(spec.capability == "device")
            #expect(!spec.requiresForeground)
            #expect(!spec.dangerous)
            #expect(spec.permission == nil)
        }
    }

    @Test func alwaysAvailable() async throws {
        let fx = try FixtureRoot()
        #expect(await DeviceCapability(sysRoot: fx.root).availability() == .available)
    }

    @Test func unknownCommandIsInvalidRequest() async throws {
        await #expect(throws: NodeError.self) {
            _ = try await invoke(DeviceCapability(), "device.reboot")
        }
    }

    @Test func versionConstants() {
        // One number for every surface, from the bundle ABI header (bundles are stamped with it).
        #expect(NodeVersion.version.split(separator: ".").count == 3 && NodeVersion.version.split(separator: ".").allSatisfy { Int($0) != nil })
        #expect(!NodeVersion.build.isEmpty)
    }
}

@Suite("Device capability: battery")
struct DeviceBatteryTests {
    @Test func chargingAt42Percent() async throws {
        let fx = try FixtureRoot()
        try fx.powerSupply("AC", ["type": "Mains", "online": "1"])
        try fx.powerSupply("BAT0", ["type": "Battery", "present": "1", "status": "Charging", "capacity": "42"])
        let battery = try await status(fx)["battery"]
        #expect(battery?["level"]?.doubleValue == 0.42)
        #expect(battery?["state"]?.stringValue == "charging")
        #expect(battery?["lowPowerModeEnabled"]?.boolValue == false)
    }

    @Test func full() async throws {
        let fx = try FixtureRoot()
        try fx.powerSupply("BAT0", ["type": "Battery", "status": "Full", "capacity": "100"])
        let battery = try await status(fx)["battery"]
        #expect(battery?["level"]?.doubleValue == 1.0)
        #expect(battery?["state"]?.stringValue == "full")
    }

    @Test func discharging() async throws {
        let fx = try FixtureRoot()
        try fx.powerSupply("AC", ["type": "Mains", "online": "0"])
        try fx.powerSupply("BAT0", ["type": "Battery", "status": "Discharging", "capacity": "77"])
        let battery = try await status(fx)["battery"]
        #expect(battery?["level"]?.doubleValue == 0.77)
        #expect(battery?["state"]?.stringValue == "unplugged")
    }

    @Test func noBatteryOmitsLevel() async throws {
        let fx = try FixtureRoot()
        try fx.powerSupply("AC", ["type": "Mains", "online": "1"])
        // A wireless mouse's battery describes the mouse, not this machine.
        try fx.powerSupply("hid-mouse-battery", ["type": "Battery", "scope": "Device", "status": "Discharging", "capacity": "12"])
        let battery = try #require(try await status(fx)["battery"]?.objectValue)
        #expect(battery["level"] == nil)
        #expect(battery["state"] == "unknown")
        #expect(battery["lowPowerModeEnabled"] == false)
    }

    @Test func emptyTreeIsUnknownBattery() async throws {
        let fx = try FixtureRoot()
        let battery = try #require(try await status(fx)["battery"]?.objectValue)
        #expect(battery.keys.sorted() == ["lowPowerModeEnabled", "state"])
        #expect(battery["state"] == "unknown")
    }

    @Test func notChargingOnACIsFull() async throws {
        let fx = try FixtureRoot()
        try fx.powerSupply("AC", ["type": "Mains", "online": "1"])
        try fx.powerSupply("BAT0", ["type": "Battery", "status": "Not charging", "capacity": "80"])
        let battery = try await status(fx)["battery"]
        #expect(battery?["state"]?.stringValue == "full")
        #expect(battery?["level"]?.doubleValue == 0.8)
    }

    @Test func unknownStatusDecidedByAdapter() {
        #expect(PowerSupplyReader.combinedState(["Unknown"], acOnline: false) == .unplugged)
        #expect(PowerSupplyReader.combinedState(["Unknown"], acOnline: true) == .full)
        #expect(PowerSupplyReader.combinedState(["Unknown"], acOnline: nil) == .unknown)
        #expect(PowerSupplyReader.combinedState([nil], acOnline: nil) == .unknown)
        #expect(PowerSupplyReader.combinedState(["Full", "Discharging"], acOnline: true) == .unplugged)
        #expect(PowerSupplyReader.combinedState(["Full", "Charging"], acOnline: true) == .charging)
    }

    @Test func twoBatteriesWeightedByEnergy() async throws {
        let fx = try FixtureRoot()
        // 20 Wh of 24 plus 10 Wh of 72: 30/96 stored, not the 52% mean of the two percentages.
        try fx.powerSupply("BAT0", ["type": "Battery", "status": "Discharging", "capacity": "83",
                                    "energy_now": "20000000", "energy_full": "24000000"])
        try fx.powerSupply("BAT1", ["type": "Battery", "status": "Unknown", "capacity": "14",
                                    "energy_now": "10000000", "energy_full": "72000000"])
        let battery = try await status(fx)["battery"]
        #expect(battery?["level"]?.doubleValue == 0.31)
        #expect(battery?["state"]?.stringValue == "unplugged")
    }

    @Test func levelFromChargeWhenNoCapacity() async throws {
        let fx = try FixtureRoot()
        try fx.powerSupply("battery", ["type": "Battery", "status": "Charging",
                                       "charge_now": "1500000", "charge_full": "3000000"])
        #expect(try await status(fx)["battery"]?["level"]?.doubleValue == 0.5)
    }

    @Test func lowPowerFromPlatformProfile() async throws {
        let fx = try FixtureRoot()
        try fx.write("/sys/firmware/acpi/platform_profile", "low-power\n")
        #expect(try await status(fx)["battery"]?["lowPowerModeEnabled"]?.boolValue == true)
        try fx.write("/sys/firmware/acpi/platform_profile", "balanced\n")
        #expect(try await status(fx)["battery"]?["lowPowerModeEnabled"]?.boolValue == false)
    }

    @Test func lowPowerFromPowerProfilesDaemon() async throws {
        let fx = try FixtureRoot()
        try fx.write("/var/lib/power-profiles-daemon/state.ini", "[State]\nDriver=placeholder\nProfile=power-saver\n")
        #expect(try await status(fx)["battery"]?["lowPowerModeEnabled"]?.boolValue == true)
    }
}

@Suite("Device capability: thermal")
struct DeviceThermalTests {
    static let tripped: [(String, Int)] = [("active", 55_000), ("passive", 90_000), ("critical", 105_000)]

    @Test(arguments: [
        // Zone with passive 90 °C / critical 105 °C trips.
        (50_000, true, "nominal"), (55_000, true, "nominal"), (80_000, true, "fair"),
        (95_000, true, "serious"), (106_000, true, "critical"),
        // Zone without trip points: fixed thresholds.
        (65_000, false, "nominal"), (75_000, false, "fair"), (85_000, false, "serious"), (95_000, false, "critical"),
    ])
    func zoneMapping(milliC: Int, withTrips: Bool, expected: String) async throws {
        let fx = try FixtureRoot()
        try fx.thermalZone(0, milliC: milliC, trips: withTrips ? Self.tripped : [])
        #expect(try await status(fx)["thermal"]?["state"]?.stringValue == expected)
    }

    @Test func onlyCriticalTripAssumesThrottlingTenBelow() {
        let trips = [ThermalReader.Trip(type: .critical, milliCelsius: 100_000)]
        #expect(ThermalReader.state(milliCelsius: 70_000, trips: trips) == .nominal)
        #expect(ThermalReader.state(milliCelsius: 80_000, trips: trips) == .fair)
        #expect(ThermalReader.state(milliCelsius: 92_000, trips: trips) == .serious)
        #expect(ThermalReader.state(milliCelsius: 100_000, trips: trips) == .critical)
    }

    @Test func hotTripIsCritical() {
        let trips = [ThermalReader.Trip(type: .passive, milliCelsius: 85_000), ThermalReader.Trip(type: .hot, milliCelsius: 95_000)]
        #expect(ThermalReader.state(milliCelsius: 96_000, trips: trips) == .critical)
    }

    @Test func hottestZoneWins() async throws {
        let fx = try FixtureRoot()
        try fx.thermalZone(0, milliC: 40_000, trips: Self.tripped)
        try fx.thermalZone(1, milliC: 96_000, trips: Self.tripped)
        try fx.thermalZone(2, milliC: 60_000)
        #expect(try await status(fx)["thermal"]?["state"]?.stringValue == "serious")
    }

    @Test func disabledTripPointsAreIgnored() async throws {
        let fx = try FixtureRoot()
        // x86_pkg_temp style: passive trip 0 means "not set"; the fixed thresholds apply.
        try fx.thermalZone(0, milliC: 60_000, trips: [("passive", 0)])
        #expect(try await status(fx)["thermal"]?["state"]?.stringValue == "nominal")
    }

    @Test func unreadableZoneAndNoZonesAreNominal() async throws {
        let fx = try FixtureRoot()
        #expect(try await status(fx)["thermal"]?["state"]?.stringValue == "nominal")
        try fx.mkdir("/sys/class/thermal/thermal_zone0")
        try fx.mkdir("/sys/class/thermal/cooling_device0")
        #expect(try await status(fx)["thermal"]?["state"]?.stringValue == "nominal")
    }
}

@Suite("Device capability: network")
struct DeviceNetworkTests {
    private func strings(_ v: JSONValue?) -> [String] { v?.arrayValue?.compactMap(\.stringValue) ?? [] }

    private func standardInterfaces(_ fx: FixtureRoot) throws {
        try fx.loopback()
        try fx.interface("wlan0", .wifi, up: true)
        try fx.interface("eth0", .wired, up: true)
        try fx.interface("veth1a2b", .veth, up: true)
    }

    @Test func defaultRouteViaWired() async throws {
        let fx = try FixtureRoot()
        try standardInterfaces(fx)
        try fx.ipv4Routes(defaultVia: "eth0")
        try fx.ipv6Routes(defaultVia: nil)
        let net = try #require(try await status(fx)["network"])
        #expect(net["status"] == "satisfied")
        #expect(strings(net["interfaces"]) == ["wired"])
        #expect(net["isExpensive"] == false)
        #expect(net["isConstrained"] == false)
    }

    @Test func defaultRouteViaWifiOverIPv6Only() async throws {
        let fx = try FixtureRoot()
        try standardInterfaces(fx)
        try fx.ipv4Routes(defaultVia: nil)
        try fx.ipv6Routes(defaultVia: "wlan0")
        let net = try #require(try await status(fx)["network"])
        #expect(net["status"] == "satisfied")
        #expect(strings(net["interfaces"]) == ["wifi"])
    }

    @Test func noDefaultRouteIsUnsatisfiedAndListsUpInterfaces() async throws {
        let fx = try FixtureRoot()
        try standardInterfaces(fx)
        try fx.ipv4Routes(defaultVia: nil)
        // Only the kernel's reject ::/0 on lo, which is no connectivity.
        try fx.ipv6Routes(defaultVia: nil)
        let net = try #require(try await status(fx)["network"])
        #expect(net["status"] == "unsatisfied")
        #expect(strings(net["interfaces"]) == ["wifi", "wired", "other"])
    }

    @Test func defaultRouteOnDownInterfaceDoesNotCount() async throws {
        let fx = try FixtureRoot()
        try fx.interface("eth0", .wired, up: false)
        try fx.interface("wlan0", .wifi, up: true)
        try fx.ipv4Routes(defaultVia: "eth0")
        let net = try #require(try await status(fx)["network"])
        #expect(net["status"] == "unsatisfied")
        #expect(strings(net["interfaces"]) == ["wifi"])
    }

    @Test func carrierCountsAsUpWhenOperstateUnknown() async throws {
        let fx = try FixtureRoot()
        try fx.interface("tun0", .veth, up: false)
        try fx.write("/sys/class/net/tun0/operstate", "unknown\n")
        try fx.write("/sys/class/net/tun0/carrier", "1\n")
        try fx.ipv4Routes(defaultVia: "tun0")
        let net = try #require(try await status(fx)["network"])
        #expect(net["status"] == "satisfied")
        #expect(strings(net["interfaces"]) == ["other"])
    }

    @Test func cellularOnlyIsExpensive() async throws {
        let fx = try FixtureRoot()
        try fx.interface("wwan0", .wwan, up: true)
        try fx.interface("eth0", .wired, up: false)
        try fx.ipv4Routes(defaultVia: "wwan0")
        let net = try #require(try await status(fx)["network"])
        #expect(net["status"] == "satisfied")
        #expect(strings(net["interfaces"]) == ["cellular"])
        #expect(net["isExpensive"] == true)
    }

    @Test func bridgeOverEthernetIsWired() async throws {
        let fx = try FixtureRoot()
        try fx.interface("eth0", .wired, up: true)
        try fx.interface("br0", .bridge(lowers: ["eth0"]), up: true)
        try fx.interface("docker0", .bridge(lowers: ["veth9"]), up: true)
        try fx.interface("veth9", .veth, up: true)
        try fx.ipv4Routes(defaultVia: "br0")
        let net = try #require(try await status(fx)["network"])
        #expect(net["status"] == "satisfied")
        #expect(strings(net["interfaces"]) == ["wired"])
        let reader = NetworkInterfacesReader(sys: SysRoot(fx.root))
        #expect(reader.kind(of: "docker0") == .other)
    }

    @Test func noInterfacesAtAll() async throws {
        let fx = try FixtureRoot()
        let net = try #require(try await status(fx)["network"])
        #expect(net["status"] == "unsatisfied")
        #expect(strings(net["interfaces"]) == [])
        #expect(net["interfaces"]?.arrayValue != nil)
    }
}

@Suite("Device capability: info")
struct DeviceInfoTests {
    @Test(arguments: [
        // Debian: double quotes, VERSION_ID present.
        ("PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nNAME=\"Debian GNU/Linux\"\nVERSION_ID=\"12\"\n",
         "Debian GNU/Linux", "12 (kernel 6.1.0-18-amd64)"),
        // Escapes inside double quotes, comments, blank lines, CRLF.
        ("# comment\n\nNAME=\"My \\\"Cool\\\" OS \\$HOME\"\r\nVERSION_ID=1.2\r\n",
         "My \"Cool\" OS $HOME", "1.2 (kernel 6.1.0-18-amd64)"),
        // Single quotes are literal; bare words take backslash escapes.
        ("NAME='Arch \\ Linux'\nBUILD_ID=rolling\n", "Arch \\ Linux", "rolling (kernel 6.1.0-18-amd64)"),
        ("NAME=Fedora\\ Linux\nVERSION_ID=40 # trailing comment\n", "Fedora Linux", "40 (kernel 6.1.0-18-amd64)"),
        // Only PRETTY_NAME.
        ("PRETTY_NAME=\"Custom Build\"\n", "Custom Build", "kernel 6.1.0-18-amd64"),
    ])
    func osReleaseVariants(text: String, name: String, version: String) async throws {
        let fx = try FixtureRoot()
        try fx.write("/etc/os-release", text)
        try fx.write("/proc/sys/kernel/osrelease", "6.1.0-18-amd64\n")
        let payload = try await info(fx)
        #expect(payload["systemName"]?.stringValue == name)
        #expect(payload["systemVersion"]?.stringValue == version)
    }

    @Test func usrLibOsReleaseFallback() async throws {
        let fx = try FixtureRoot()
        try fx.write("/usr/lib/os-release", "NAME=\"Ubuntu\"\nVERSION_ID=\"24.04\"\n")
        let payload = try await info(fx)
        #expect(payload["systemName"] == "Ubuntu")
        // No kernel release in the fixture and no fallback to the test machine's.
        #expect(payload["systemVersion"] == "24.04")
    }

    @Test func nothingAtAllDegrades() async throws {
        let fx = try FixtureRoot()
        let payload = try #require(try await info(fx).objectValue)
        #expect(payload["systemName"] == "Linux")
        #expect(payload["systemVersion"] == "unknown")
        #expect(payload["deviceName"] == "localhost")
        #expect(payload["modelIdentifier"] == "unknown")
        #expect(payload["locale"] == "en-US")
        #expect(payload["appVersion"] == .string(NodeVersion.version))
        #expect(payload["appBuild"] == .string(NodeVersion.build))
        #expect(payload.keys.sorted() == ["appBuild", "appVersion", "deviceName", "locale",
                                          "modelIdentifier", "systemName", "systemVersion"])
    }

    @Test func hostnameSources() async throws {
        let fx = try FixtureRoot()
        try fx.write("/etc/hostname", "# set by installer\nconfigured-name\n")
        #expect(try await info(fx)["deviceName"] == "configured-name")
        try fx.write("/proc/sys/kernel/hostname", "runtime-name\n")
        #expect(try await info(fx)["deviceName"] == "runtime-name")
    }

    @Test func dmiModel() async throws {
        let fx = try FixtureRoot()
        try fx.write("/sys/class/dmi/id/sys_vendor", "Dell Inc.\n")
        try fx.write("/sys/class/dmi/id/product_name", "XPS 13 9310\n")
        #expect(try await info(fx)["modelIdentifier"] == "Dell Inc. XPS 13 9310")
    }

    @Test func dmiModelLenovoUsesProductVersion() async throws {
        let fx = try FixtureRoot()
        try fx.write("/sys/class/dmi/id/sys_vendor", "LENOVO\n")
        try fx.write("/sys/class/dmi/id/product_name", "20XW00ABUS\n")
        try fx.write("/sys/class/dmi/id/product_version", "ThinkPad X1 Carbon Gen 9\n")
        #expect(try await info(fx)["modelIdentifier"] == "LENOVO ThinkPad X1 Carbon Gen 9")
    }

    @Test func dmiVendorNotRepeated() async throws {
        let fx = try FixtureRoot()
        try fx.write("/sys/class/dmi/id/sys_vendor", "HP\n")
        try fx.write("/sys/class/dmi/id/product_name", "HP EliteBook 840 G8 Notebook PC\n")
        #expect(try await info(fx)["modelIdentifier"] == "HP EliteBook 840 G8 Notebook PC")
    }

    @Test func placeholderDmiFallsBackToDeviceTree() async throws {
        let fx = try FixtureRoot()
        try fx.write("/sys/class/dmi/id/sys_vendor", "To Be Filled By O.E.M.\n")
        try fx.write("/sys/class/dmi/id/product_name", "To Be Filled By O.E.M.\n")
        // Device-tree strings are NUL-terminated, without a newline.
        try fx.write("/proc/device-tree/model", "Raspberry Pi 4 Model B Rev 1.4\0")
        #expect(try await info(fx)["modelIdentifier"] == "Raspberry Pi 4 Model B Rev 1.4")
    }

    @Test(arguments: [
        (["LANG": "en_US.UTF-8"], "en-US"),
        (["LANG": "de_DE.UTF-8", "LC_MESSAGES": "fr_CA.utf8"], "fr-CA"),
        (["LANG": "de_DE.UTF-8", "LC_MESSAGES": "fr_CA", "LC_ALL": "pt_BR.ISO-8859-1"], "pt-BR"),
        (["LC_ALL": "", "LANG": "nl_NL"], "nl-NL"),
        (["LANG": "C.UTF-8"], "en-US"),
        (["LANG": "POSIX"], "en-US"),
        (["LC_ALL": "C", "LANG": "de_DE.UTF-8"], "en-US"),
        (["LANG": "de_DE@euro"], "de-DE"),
        (["LANG": "sr_RS.UTF-8@latin"], "sr-Latn-RS"),
        (["LANG": "ja"], "ja"),
        ([:], "en-US"),
    ] as [([String: String], String)])
    func localeFromEnvironment(env: [String: String], expected: String) async throws {
        let fx = try FixtureRoot()
        #expect(try await info(fx, env: env)["locale"]?.stringValue == expected)
    }

    @Test func localeFromLocaleConfWhenEnvironmentIsEmpty() async throws {
        let fx = try FixtureRoot()
        try fx.write("/etc/default/locale", "LANG=\"es_ES.UTF-8\"\n")
        #expect(try await info(fx)["locale"] == "es-ES")
        try fx.write("/etc/locale.conf", "LANG=it_IT.UTF-8\n")
        #expect(try await info(fx)["locale"] == "it-IT")
        #expect(try await info(fx, env: ["LANG": "sv_SE.UTF-8"])["locale"] == "sv-SE")
    }
}

@Suite("Device capability: storage and uptime")
struct DeviceStorageUptimeTests {
    @Test func uptimeFromProc() async throws {
        let fx = try FixtureRoot()
        try fx.write("/proc/uptime", "12345.67 45678.90\n")
        #expect(try await status(fx)["uptimeSeconds"]?.doubleValue == 12345.67)
    }

    @Test func missingStateDirMeasuresItsFilesystem() async throws {
        let fx = try FixtureRoot()
        let cap = DeviceCapability(sysRoot: fx.root, storagePath: fx.root + "/not/yet/created", environment: [:])
        let storage = try #require(try await invoke(cap, "device.status")["storage"])
        let total = try #require(storage["totalBytes"]?.doubleValue)
        let free = try #require(storage["freeBytes"]?.doubleValue)
        let used = try #require(storage["usedBytes"]?.doubleValue)
        #expect(total > 0)
        #expect(free + used <= total)
    }
}

@Suite("Device capability: this machine")
struct DeviceRealMachineTests {
    @Test func infoHasEveryKey() async throws {
        let payload = try #require(try await invoke(DeviceCapability(), "device.info").objectValue)
        for key in ["deviceName", "modelIdentifier", "systemName", "systemVersion", "appVersion", "appBuild", "locale"] {
            let value = try #require(payload[key]?.stringValue, "\(key) missing or not a string")
            #expect(!value.isEmpty, "\(key) is empty")
        }
        #expect(payload.count == 7)
    }

    @Test func statusHasEveryKey() async throws {
        let payload = try await invoke(DeviceCapability(), "device.status")

        let battery = try #require(payload["battery"]?.objectValue)
        #expect(["unknown", "unplugged", "charging", "full"].contains(battery["state"]?.stringValue ?? ""))
        #expect(battery["lowPowerModeEnabled"]?.boolValue != nil)
        if let level = battery["level"] {
            let l = try #require(level.doubleValue)
            #expect((0...1).contains(l))
        }

        #expect(["nominal", "fair", "serious", "critical"].contains(payload["thermal"]?["state"]?.stringValue ?? ""))

        let storage = try #require(payload["storage"])
        let total = try #require(storage["totalBytes"]?.doubleValue)
        let free = try #require(storage["freeBytes"]?.doubleValue)
        let used = try #require(storage["usedBytes"]?.doubleValue)
        #expect(total > 0)
        #expect(free >= 0 && used >= 0 && free + used <= total)

        let network = try #require(payload["network"])
        #expect(["satisfied", "unsatisfied", "requiresConnection"].contains(network["status"]?.stringValue ?? ""))
        #expect(network["isExpensive"]?.boolValue != nil)
        #expect(network["isConstrained"]?.boolValue != nil)
        let interfaces = try #require(network["interfaces"]?.arrayValue)
        for i in interfaces { #expect(["wifi", "cellular", "wired", "other"].contains(i.stringValue ?? "")) }

        let uptime = try #require(payload["uptimeSeconds"]?.doubleValue)
        #expect(uptime > 0)

        // The whole payload survives a JSON round trip (no NaN/inf numbers).
        #expect(JSONValue.parse(payload.jsonString()) == payload)
    }
}

@Suite("Device capability: parsers")
struct DeviceParserTests {
    @Test func shellAssignments() {
        let vars = ShellAssignments.parse("""
            A="x y"
            B='it''s'
            C=plain
            export D="d"
              E = bad
            1F=bad
            G="a\\\\b\\nc"
            H=
            """)
        #expect(vars["A"] == "x y")
        #expect(vars["B"] == "its")
        #expect(vars["C"] == "plain")
        #expect(vars["D"] == "d")
        #expect(vars["E"] == nil && vars["E "] == nil)
        #expect(vars["1F"] == nil)
        #expect(vars["G"] == "a\\b\\nc")
        #expect(vars["H"] == "")
    }

    @Test func routeParsing() {
        let v4 = FixtureRoot.routeHeader
            + "eth0\t00000000\t0102A8C0\t0003\t0\t0\t100\t00000000\t0\t0\t0\n"
            + "wg0\t00000000\t00000000\t0201\t0\t0\t0\t00000000\t0\t0\t0\n"
            + "eth1\t0002A8C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n"
        #expect(RouteTableReader.ipv4Defaults(v4) == ["eth0"])
    }
}
