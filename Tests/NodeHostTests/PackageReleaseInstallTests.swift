import Foundation
@testable import Support
@testable import TestSupport
import Testing

/// The Debian 13 packages (amd64 and arm64) installed into a fresh root of their own release and
/// architecture and used there as a user would, then purged. scripts/test builds them
/// (scripts/package) and their roots (scripts/testroot --recommends: the Depends and the
/// Recommends); the arm64 root runs under Debian 13's qemu-user, which this suite registers with
/// binfmt_misc and removes again. Like PackageInstallTests, every command runs in a network
/// namespace with no interfaces (the gpsd check: its own loopback only).
@Suite(.serialized, .enabled(if: ReleasePackages.reasonToSkip == nil, ReleasePackages.skipComment))
struct PackageReleaseInstallTests {
    /// One package and the root it goes into: OPENCLAW_TEST_DEB13_<ARCH> and OPENCLAW_TEST_ROOT13_<ARCH>.
    struct Target: CustomTestStringConvertible, Sendable {
        let arch: String
        var deb: String? { ReleasePackages.env["OPENCLAW_TEST_DEB13_\(arch.uppercased())"] }
        var tarball: String? { ReleasePackages.env["OPENCLAW_TEST_ROOT13_\(arch.uppercased())"] }
        /// openclaw-node-libcamera, where it was built (OPENCLAW_TEST_DEB13_LIBCAMERA_<ARCH>).
        var libcameraDeb: String? { ReleasePackages.env["OPENCLAW_TEST_DEB13_LIBCAMERA_\(arch.uppercased())"] }
        var testDescription: String { "Debian 13 \(arch)" }
    }

    static let targets = ["amd64", "arm64"].map(Target.init).filter { $0.deb != nil && $0.tarball != nil }

    @Test(arguments: targets)
    func installUseAndPurge(_ target: Target) throws {
        let emulated = target.arch != "amd64"
        if emulated {
            let on = try runProcess(TestPaths.repoRoot + "/scripts/binfmt-qemu", ["on"], timeout: 30)
            try #require(on.code == 0, "binfmt_misc: \(on.stderr)")
        }
        defer { if emulated { _ = try? runProcess(TestPaths.repoRoot + "/scripts/binfmt-qemu", ["off"], timeout: 30) } }
        let root = try ReleaseRoot(tarball: target.tarball!); defer { root.cleanup() }
        let name = (target.deb! as NSString).lastPathComponent
        let before = try root.files()
        #expect(FileManager.default.createFile(atPath: root.path + "/tmp/" + name, contents: FileManager.default.contents(atPath: target.deb!)))

        let install = try root.run("apt-get install -y --no-install-recommends /tmp/\(name)", timeout: 900)
        try #require(install.code == 0, "apt install failed:\n\(install.stdout)\n\(install.stderr)")
        let arch = try root.run("dpkg --print-architecture; uname -m")
        #expect(arch.stdout.hasPrefix(target.arch), "\(arch.stdout)")

        let version = try root.run("openclaw-node --version")
        #expect(version.code == 0, "\(version.stderr)")
        #expect(version.stdout.contains("bundles: camera (/usr/lib/openclaw-node)"), "\(version.stdout)")

        let check = try root.run("openclaw-node config check /etc/openclaw-node/config.json5")
        #expect(check.code == 0, "\(check.stdout)\(check.stderr)")

        // As the service runs: its account and the packaged config.
        let caps = try root.run("runuser -u openclaw-node -- openclaw-node caps --json")
        #expect(caps.code == 0, "\(caps.stderr)")
        let commands = JSONValue.parse(caps.stdout)?["commands"]?.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(commands.contains("device.info"), "\(caps.stdout)")

        // Doctor reports the recommended libraries that are missing with this release's names.
        let doctor = try root.run("runuser -u openclaw-node -- openclaw-node doctor 2>&1")
        #expect(!doctor.stdout.isEmpty, "\(doctor.stderr)")
        #expect(!doctor.stdout.contains("libswscale6") && !doctor.stdout.contains("libavcodec59"), "\(doctor.stdout)")

        let info = try root.run("runuser -u openclaw-node -- openclaw-node invoke device.info --local 2>/dev/null")
        #expect(info.code == 0, "\(info.stdout)\(info.stderr)")
        #expect(JSONValue.parse(info.stdout)?["appVersion"]?.stringValue != nil, "\(info.stdout)")

        // system.run, with the capability turned on in a config of its own.
        let run = try root.run("""
            printf '{ capabilities: { system: { enabled: true } } }' > /tmp/system.json5 && \
            openclaw-node invoke system.run --local --config /tmp/system.json5 --params '{"command":["uname","-m"]}' 2>/dev/null; \
            rc=$?; rm -f /tmp/system.json5; exit $rc
            """)
        #expect(run.code == 0, "\(run.stdout)\(run.stderr)")
        let ran = JSONValue.parse(run.stdout)
        // Under Debian 13's qemu (scripts/binfmt-qemu), which has prctl(PR_SET_CHILD_SUBREAPER).
        #expect(ran?["exitCode"]?.intValue == 0, "\(run.stdout)")
        #expect(ran?["stdout"]?.stringValue == (target.arch == "arm64" ? "aarch64\n" : "x86_64\n"), "\(run.stdout)")

        // The capabilities with a stand-in for their hardware (ReleaseRootCapabilities); one that
        // cannot even start is recorded and the others still run.
        let checks: [(String, () throws -> Void)] = [
            ("screen", { try ReleaseRootCapabilities.screen(root) }),
            ("camera", { try ReleaseRootCapabilities.camera(root, arch: target.arch) }),
            ("location", { try ReleaseRootCapabilities.location(root) }),
            ("talk", { try ReleaseRootCapabilities.talk(root) }),
            ("echo canceller", { try ReleaseRootCapabilities.echoCanceller(root, arch: target.arch) }),
        ] + (target.libcameraDeb.map { deb in [("libcamera", { try ReleaseRootCapabilities.libcamera(root, deb: deb, arch: target.arch) })] } ?? [])
        for (name, check) in checks {
            do { try check() } catch { Issue.record("\(name): \(error)") }
        }

        let purge = try root.run("apt-get purge -y openclaw-node", timeout: 600)
        #expect(purge.code == 0, "\(purge.stdout)\(purge.stderr)")
        let left = try root.files().subtracting(before).filter { !PackageInstallTests.isBookkeeping($0) }
        #expect(left.isEmpty, "left behind after purge: \(left.sorted())")
    }
}

/// A root unpacked from a cached tarball, removed at the end.
final class ReleaseRoot {
    let path: String
    init(tarball: String) throws {
        path = TestPaths.tempDir("debroot13")
        let r = try runProcess("/usr/bin/tar", ["-C", path, "-xf", tarball], timeout: 300)
        guard r.code == 0 else { throw TestFailure("unpacking the Debian root failed: \(r.stderr)") }
    }
    /// `command` by /bin/sh inside the root, with its own /proc, and no network at all: with
    /// `loopback`, only the namespace's own lo, up. `binds`: this machine's directories mounted at
    /// the same place in the root. The mounts are in the command's mount namespace and go with it.
    func run(_ command: String, binds: [String] = [], loopback: Bool = false, timeout: TimeInterval = 300) throws -> ProcessResult {
        var setup = ["mount -t proc proc '\(path)/proc'"]
        for dir in binds { setup += ["mkdir -p '\(path)\(dir)'", "mount --bind '\(dir)' '\(path)\(dir)'"] }
        if loopback { setup.append("/sbin/ip link set lo up") }
        let script = setup.joined(separator: " && ") +
            " && exec chroot '\(path)' /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 /bin/sh -c \"$0\""
        return try runProcess("/usr/bin/unshare", ["--mount", "--net", "--fork", "--pid", "/bin/sh", "-c", script, command],
                              timeout: timeout)
    }
    /// `command` inside the root in the background, in mount and PID namespaces of its own but on
    /// this machine's network (a daemon there reaches the test gateway on loopback); stopping it
    /// stops everything it started (the namespace's first process goes, and the kernel ends the rest).
    func start(_ command: String) throws -> BackgroundProcess {
        let script = "mount -t proc proc '\(path)/proc' && exec chroot '\(path)' /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 /bin/sh -c \"$0\""
        return try BackgroundProcess("/usr/bin/unshare", ["--mount", "--fork", "--pid", "--kill-child", "/bin/sh", "-c", script, command])
    }

    func files() throws -> Set<String> {
        let r = try runProcess("/usr/bin/find", [path, "-xdev", "-mindepth", "1"], timeout: 120)
        return Set(r.stdout.split(separator: "\n").map { String($0.dropFirst(path.count + 1)) })
    }
    func cleanup() { _ = try? runProcess("/bin/rm", ["-rf", path], timeout: 120) }
}

/// What scripts/test prepared for PackageReleaseInstallTests, or why it is skipped.
enum ReleasePackages {
    static let env = ProcessInfo.processInfo.environment
    static var reasonToSkip: String? {
        if getuid() != 0 { return "not root: chroot, apt and binfmt_misc need root" }
        if let why = env["OPENCLAW_TEST_RELEASE_SKIP"] { return why }
        if PackageReleaseInstallTests.targets.isEmpty {
            return "no Debian 13 package or root prepared: scripts/test builds them (OPENCLAW_TEST_DEB13_AMD64, OPENCLAW_TEST_ROOT13_AMD64, …_ARM64)"
        }
        return nil
    }
    static var skipComment: Comment { Comment(rawValue: reasonToSkip ?? "") }
}
