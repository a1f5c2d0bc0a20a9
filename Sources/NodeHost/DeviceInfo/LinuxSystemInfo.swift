import Config
import Glibc
import Kit
import Support

/// The static facts behind `device.info`: who this machine is and what it runs.
struct LinuxSystemInfo: Sendable {
    let sys: SysRoot

    /// The runtime host name (what `uname -n` shows), then the configured one. The kernel's value
    /// wins over /etc/hostname because DHCP or hostnamectl may have set a transient name.
    var hostname: String {
        if let name = usable(sys.value("/proc/sys/kernel/hostname")) { return name }
        if sys.isHost, let name = usable(Self.gethostname()) { return name }
        if let file = sys.read("/etc/hostname") {
            let first = file.split(whereSeparator: \.isNewline).map { $0.trimmed() }
                .first { !$0.isEmpty && !$0.hasPrefix("#") }
            if let name = usable(first) { return name }
        }
        return "localhost"
    }

    /// "(none)" is the kernel's placeholder before anything set a name.
    private func usable(_ name: String?) -> String? {
        guard let n = name?.trimmed(), !n.isEmpty, n != "(none)" else { return nil }
        return n
    }

    private static func gethostname() -> String? {
        var buf = [CChar](repeating: 0, count: 256)
        guard Glibc.gethostname(&buf, buf.count - 1) == 0 else { return nil }
        return String(cBuffer: buf)
    }

    /// The hardware model: SMBIOS/DMI on PCs and servers, the device tree on ARM boards
    /// ("Raspberry Pi 4 Model B Rev 1.4"), else "unknown" (containers and some VMs expose neither).
    var modelIdentifier: String {
        if let dmi = dmiModel { return dmi }
        for path in ["/proc/device-tree/model", "/sys/firmware/devicetree/base/model"] {
            if let model = sys.value(path) { return model }
        }
        return "unknown"
    }

    /// "<sys_vendor> <product_name>", e.g. "Dell Inc. XPS 13 9310". Lenovo puts a machine-type code
    /// in product_name ("20XW00ABUS") and the marketing name in product_version, so that is used
    /// instead for them. Firmware placeholders are treated as absent.
    private var dmiModel: String? {
        let base = "/sys/class/dmi/id/"
        let vendor = dmiField(sys.value(base + "sys_vendor"))
        var product = dmiField(sys.value(base + "product_name"))
        if vendor?.lowercased() == "lenovo", let version = dmiField(sys.value(base + "product_version")) {
            product = version
        }
        guard let product else { return nil }
        guard let vendor else { return product }
        // Some vendors repeat themselves in product_name ("HP HP EliteBook" reads badly).
        let vendorWord = vendor.split(separator: " ").first.map { $0.lowercased() } ?? vendor.lowercased()
        if product.lowercased().hasPrefix(vendorWord) { return product }
        return "\(vendor) \(product)"
    }

    private static let dmiPlaceholders: Set<String> = [
        "to be filled by o.e.m.", "to be filled by oem", "system product name", "system manufacturer",
        "system version", "default string", "not specified", "not applicable", "none", "o.e.m.", "oem",
        "unknown", "invalid", "x.x", "0", "123456789", "type1productconfigid", "n/a",
    ]

    private func dmiField(_ value: String?) -> String? {
        guard let v = value, !Self.dmiPlaceholders.contains(v.lowercased()) else { return nil }
        return v
    }

    /// os-release(5): /etc first (the admin's override), then the vendor copy in /usr/lib.
    var osRelease: [String: String] {
        for path in ["/etc/os-release", "/usr/lib/os-release"] {
            if let text = sys.read(path) { return ShellAssignments.parse(text) }
        }
        return [:]
    }

    /// NAME ("Debian GNU/Linux"), which stays stable across releases, then PRETTY_NAME.
    static func systemName(_ osRelease: [String: String]) -> String {
        for key in ["NAME", "PRETTY_NAME"] {
            if let v = osRelease[key], !v.isEmpty { return v }
        }
        return "Linux"
    }

    /// The kernel release, e.g. "6.1.0-18-amd64".
    var kernelRelease: String? {
        if let r = sys.value("/proc/sys/kernel/osrelease") { return r }
        guard sys.isHost else { return nil }
        var u = utsname()
        guard uname(&u) == 0 else { return nil }
        return withUnsafeBytes(of: &u.release) { raw in
            String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
        }
    }

    /// Format: "<distribution version> (kernel <release>)", e.g. "12 (kernel 6.1.0-18-amd64)".
    /// The distribution version is VERSION_ID, or BUILD_ID for rolling releases without one
    /// (Arch: "rolling"). With only one part known it stands alone ("12", or
    /// "kernel 6.1.0-18-amd64"); with neither, "unknown".
    static func systemVersion(_ osRelease: [String: String], kernel: String?) -> String {
        let distro = [osRelease["VERSION_ID"], osRelease["BUILD_ID"]].compactMap { $0 }.first { !$0.isEmpty }
        switch (distro, kernel) {
        case let (d?, k?): return "\(d) (kernel \(k))"
        case let (d?, nil): return d
        case let (nil, k?): return "kernel \(k)"
        case (nil, nil): return "unknown"
        }
    }
}
