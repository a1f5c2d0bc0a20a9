@testable import Config
import Foundation
@testable import NodeDaemon
@testable import Support
@testable import TestSupport
import Testing

/// doctor names what an enabled bundle's manifest says it uses and this system lacks, from dpkg's
/// status file, with the command that installs it.
struct DoctorPackagesTests {
    static let status = """
        Package: gpsd
        Status: install ok installed
        Architecture: amd64

        Package: chromium
        Status: deinstall ok config-files

        Package: chromium-headless-shell
        Status: install ok installed

        Package: espeak-ng-data
        Status: install ok installed
        """

    @Test func missingPackagesAreNamedWithTheInstallCommand() throws {
        let path = TestPaths.tempDir("dpkg") + "/status"
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        try Self.status.write(toFile: path, atomically: true, encoding: .utf8)
        let installed = try #require(InstalledPackages.read(path))
        #expect(installed.names == ["gpsd", "chromium-headless-shell", "espeak-ng-data"], "config-files only is not installed")
        #expect(installed.satisfies("chromium | chromium-headless-shell") && !installed.satisfies("chromium"))
        #expect(InstalledPackages.read(path + ".absent") == nil)

        let talk = try BundleManifestReader.read("""
            { name: "talk", summary: "s", packages: { recommends: ["pocketsphinx-en-us", "espeak-ng-data", "libcamera-ipa [trixie]"] },
              commands: { "talk.x": { summary: "x" } } }
            """, file: "m", expectedName: "talk", library: nil)
        let findings = Doctor.packageFindings(talk, installed: installed)
        let expectedMissing = InstalledPackages.release == "trixie" ? "pocketsphinx-en-us, libcamera-ipa" : "pocketsphinx-en-us"
        #expect(findings.map(\.text) == ["uses \(expectedMissing) when present, not installed: sudo apt install \(expectedMissing.replacingOccurrences(of: ", ", with: " "))"])
        #expect(findings.first?.level == .warn)
        let location = try BundleManifestReader.read("""
            { name: "location", summary: "s", packages: { recommends: ["gpsd"] }, commands: { "location.x": { summary: "x" } } }
            """, file: "m", expectedName: "location", library: nil)
        #expect(Doctor.packageFindings(location, installed: installed).map(\.text) == ["packages it uses: gpsd installed"])
        #expect(Doctor.packageFindings(location, installed: nil).isEmpty, "no dpkg: nothing said")
    }

    /// The programs an enabled bundle runs: found ones with their path, missing ones with what
    /// they are for and what installs them; a failure only for one that is not optional.
    @Test func programsAreFoundOrNamedWithWhatInstallsThem() throws {
        let desktop = try BundleManifestReader.read("""
            { name: "desktop", summary: "s", commands: { "desktop.x": { summary: "x" } },
              programs: { x11vnc: { package: "x11vnc", optional: true, for: "X" }, wayvnc: { package: "wayvnc", optional: true, for: "wlroots" } } }
            """, file: "m", expectedName: "desktop", library: nil)
        let onlyX = Doctor.programFindings(desktop) { $0 == "x11vnc" ? "/usr/bin/x11vnc" : nil }
        #expect(onlyX.map(\.text) == ["programs: x11vnc (/usr/bin/x11vnc); missing: wayvnc, for wlroots (sudo apt install wayvnc)"])
        #expect(onlyX.first?.level == .ok)
        let files = try BundleManifestReader.read("""
            { name: "files", summary: "s", commands: { "files.x": { summary: "x" } },
              programs: { tar: { package: "tar", for: "dir.fetch" }, rpicam: { from: "Raspberry Pi OS", optional: true, for: "a Pi" } } }
            """, file: "m", expectedName: "files", library: nil)
        let none = Doctor.programFindings(files) { _ in nil }
        #expect(none.map(\.text) == ["missing: tar, for dir.fetch (sudo apt install tar); rpicam, for a Pi (from Raspberry Pi OS)"])
        #expect(none.first?.level == .fail, "tar is not optional: dir.fetch cannot work")
        // The real lookup: this machine's tar, on PATH or in /usr/bin.
        #expect(Doctor.programFindings(files).first?.text.hasPrefix("programs: tar (/") == true)
    }
}
