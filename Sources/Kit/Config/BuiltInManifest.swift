import Support

/// The manifest of the core's own capability, `device`: an ordinary manifest (the same reader, the
/// same rules), compiled in because the capability has no library of its own.
public enum BuiltInManifest {
    public static let device: BundleManifest = {
        do { return try BundleManifestReader.read(deviceText, file: "built in", expectedName: nil, library: nil) }
        catch { fatalError("the built-in device manifest is invalid: \(error)") }
    }()

    static let deviceText = """
        {
          name: "device",
          summary: "device information (built in)",
          enabledByDefault: true,
          commands: {
            "device.info": { summary: "Host name, hardware model, OS name and version, node version, locale" },
            "device.status": { summary: "Battery, thermal state, storage, network path and uptime" },
          },
        }
        """
}
