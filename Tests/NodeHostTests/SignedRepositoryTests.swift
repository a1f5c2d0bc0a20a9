import Foundation
@testable import Support
@testable import TestSupport
import Testing

/// The signed apt repository (scripts/repo-key, scripts/repo --sign) in clean Debian roots: apt
/// installs from it with a deb822 `Signed-By` entry (no trusted=yes), and refuses it when an index
/// was changed after signing, when another key signed it, and when it is not signed at all. Each
/// root is a throwaway copy of the one scripts/test made; apt runs with no network, the repository
/// is a file: URI inside the root.
@Suite(.serialized, .enabled(if: SignedRepositorySetup.reasonToSkip == nil, SignedRepositorySetup.skipComment))
struct SignedRepositoryTests {
    typealias Target = SignedRepositorySetup.Target

    /// A signing key of its own (scripts/repo-key new) in a private folder.
    struct Key {
        let home: String
        init(_ dir: String, _ name: String) throws {
            home = dir + "/" + name
            let r = try runProcess(TestPaths.repoRoot + "/scripts/repo-key", ["new", "--name", "test \(name)"], env: Key.env(home))
            try #require(r.code == 0, "\(r.stdout)\(r.stderr)")
        }
        static func env(_ home: String) -> [String: String] { ["PATH": "/usr/bin:/bin", "HOME": "/root", "OPENCLAW_REPO_GNUPGHOME": home] }
        /// scripts/repo --sign of `deb` into `out`.
        func repo(_ deb: String, out: String) throws {
            let r = try runProcess(TestPaths.repoRoot + "/scripts/repo", ["--out", out, "--sign", deb], env: Key.env(home), timeout: 120)
            try #require(r.code == 0, "\(r.stdout)\(r.stderr)")
        }
    }

    @Test(arguments: SignedRepositorySetup.targets)
    func aptInstallsFromTheSignedRepositoryAndRefusesTamperingAndOtherKeys(_ t: Target) throws {
        let dir = TestPaths.tempDir("signed-repo"); defer { try? FileManager.default.removeItem(atPath: dir) }
        let ours = try Key(dir, "ours"), other = try Key(dir, "other")
        try ours.repo(t.deb, out: dir + "/repo")
        try other.repo(t.deb, out: dir + "/repo-other")
        let unsigned = try runProcess(TestPaths.repoRoot + "/scripts/repo", ["--out", dir + "/repo-unsigned", t.deb], timeout: 120)
        try #require(unsigned.code == 0, "\(unsigned.stderr)")
        let fm = FileManager.default
        #expect(fm.fileExists(atPath: dir + "/repo/dists/\(t.suite)/InRelease") && fm.fileExists(atPath: dir + "/repo/dists/\(t.suite)/Release.gpg"))

        let root = try ReleaseRoot(tarball: t.tarball); defer { root.cleanup() }
        // The node's side, as README says: the keyring and a deb822 source naming it.
        try fm.createDirectory(atPath: root.path + "/etc/apt/keyrings", withIntermediateDirectories: true)
        try fm.copyItem(atPath: dir + "/repo/openclaw-node-archive-keyring.gpg", toPath: root.path + "/etc/apt/keyrings/openclaw-node.gpg")
        let sources = """
            Types: deb
            URIs: file:/srv/openclaw-node
            Suites: \(t.suite)
            Components: main
            Signed-By: /etc/apt/keyrings/openclaw-node.gpg

            """
        try sources.write(toFile: root.path + "/etc/apt/sources.list.d/openclaw-node.sources", atomically: true, encoding: .utf8)
        /// Publishes `repo` as the root's /srv/openclaw-node and updates from that source alone (the
        /// root's Debian sources would need a network), from empty lists every time.
        func update(from repo: String) throws -> ProcessResult {
            _ = try runProcess("/bin/rm", ["-rf", root.path + "/srv/openclaw-node"])
            let cp = try runProcess("/bin/cp", ["-a", repo, root.path + "/srv/openclaw-node"])
            try #require(cp.code == 0, "\(cp.stderr)")
            return try root.run("rm -rf /var/lib/apt/lists/* && apt-get update -o Dir::Etc::sourcelist=/etc/apt/sources.list.d/openclaw-node.sources " +
                                "-o Dir::Etc::sourceparts=- -o APT::Get::List-Cleanup=0 2>&1")
        }

        let good = try update(from: dir + "/repo")
        #expect(good.code == 0 && !good.stdout.contains("W:") && !good.stdout.contains("E:"), "\(good.stdout)")
        let install = try root.run("apt-get install -y --no-install-recommends openclaw-node 2>&1", timeout: 600)
        #expect(install.code == 0, "\(install.stdout)")
        let version = try root.run("openclaw-node --version")
        #expect(version.code == 0 && version.stdout.contains("openclaw-node"), "\(version.stdout)\(version.stderr)")

        // An index changed after signing (a package's checksum swapped, the .gz made again from it).
        let tampered = dir + "/repo-tampered"
        _ = try runProcess("/bin/cp", ["-a", dir + "/repo", tampered])
        let index = try #require(try runProcess("/usr/bin/find", [tampered + "/dists", "-name", "Packages"]).stdout.split(separator: "\n").first.map(String.init))
        var text = try String(contentsOfFile: index, encoding: .utf8)
        text = text.replacingOccurrences(of: "SHA256: ", with: "SHA256: 00")
        try text.write(toFile: index, atomically: true, encoding: .utf8)
        _ = try runProcess("/bin/gzip", ["-9nkf", index])
        let changed = try update(from: tampered)
        #expect(changed.code != 0 && (changed.stdout.contains("Hash Sum mismatch") || changed.stdout.contains("unexpected size")), "\(changed.stdout)")

        // Signed, but by a key this node does not trust.
        let foreign = try update(from: dir + "/repo-other")
        #expect(foreign.code != 0 && foreign.stdout.contains("is not signed"), "\(foreign.stdout)")
        // Not signed at all.
        let bare = try update(from: dir + "/repo-unsigned")
        #expect(bare.code != 0 && bare.stdout.contains("not signed"), "\(bare.stdout)")
        // And back to ours: accepted again.
        #expect(try update(from: dir + "/repo").code == 0)
    }

    /// node.autoUpdate: a newer version published to the signed repository is installed by the
    /// update unit's command (`openclaw-node update --if-due`), from that source alone; a second
    /// run within the interval does nothing; `status` shows the last check.
    @Test(arguments: SignedRepositorySetup.targets)
    func theUpdateCommandInstallsANewerVersionFromItsSource(_ t: Target) throws {
        let dir = TestPaths.tempDir("update-repo"); defer { try? FileManager.default.removeItem(atPath: dir) }
        let key = try Key(dir, "ours")
        try key.repo(t.deb, out: dir + "/repo")
        let version = try #require(try runProcess("/usr/bin/dpkg-deb", ["-f", t.deb, "Version"]).stdout.split(separator: "\n").first.map(String.init))
        let (next, nextDeb) = try Self.nextVersion(of: t.deb, in: dir)

        let root = try ReleaseRoot(tarball: t.tarball); defer { root.cleanup() }
        let fm = FileManager.default
        try Self.trust(dir + "/repo", in: root, suite: t.suite)
        func publish() throws { try Self.publish(dir + "/repo", in: root) }
        try publish()
        let install = try root.run("apt-get update \(Self.only) >/dev/null && apt-get install -y --no-install-recommends openclaw-node 2>&1", timeout: 600)
        try #require(install.code == 0, "\(install.stdout)")
        try fm.createDirectory(atPath: root.path + "/etc/openclaw-node/config.d", withIntermediateDirectories: true)
        try "{ node: { autoUpdate: { enabled: true } } }".write(toFile: root.path + "/etc/openclaw-node/config.d/50-update.json5", atomically: true, encoding: .utf8)

        // Nothing newer yet: up to date.
        let same = try root.run("openclaw-node update --if-due --config /etc/openclaw-node/config.json5 2>&1", timeout: 600)
        #expect(same.code == 0 && same.stdout.contains("up to date (openclaw-node \(version))"), "\(same.stdout)")
        // Published: the interval has not passed, so the timer's run waits …
        try key.repo(nextDeb, out: dir + "/repo")
        try publish()
        let early = try root.run("openclaw-node update --if-due --config /etc/openclaw-node/config.json5 2>&1")
        #expect(early.code == 0 && early.stdout.contains("next after 24 h"), "\(early.stdout)")
        // … and an update asked for now installs it.
        let up = try root.run("openclaw-node update --config /etc/openclaw-node/config.json5 2>&1", timeout: 600)
        #expect(up.code == 0 && up.stdout.contains("upgraded openclaw-node \(version) → openclaw-node \(next)"), "\(up.stdout)")
        let now = try root.run("dpkg-query -W -f='${Version}' openclaw-node")
        #expect(now.stdout == next, "\(now.stdout)")
        let status = try root.run("runuser -u openclaw-node -- openclaw-node status --config /etc/openclaw-node/config.json5 2>&1")
        #expect(status.stdout.contains("Last update:  checked 0 min ago: upgraded openclaw-node \(version) → openclaw-node \(next)"), "\(status.stdout)")
        // Off in the config: the timer's run does nothing.
        try "{ node: { autoUpdate: { enabled: false } } }".write(toFile: root.path + "/etc/openclaw-node/config.d/50-update.json5", atomically: true, encoding: .utf8)
        let off = try root.run("openclaw-node update --if-due --config /etc/openclaw-node/config.json5 2>&1")
        #expect(off.code == 0 && off.stdout.contains("node.autoUpdate.enabled is false"), "\(off.stdout)")
    }
}

extension SignedRepositoryTests {
    /// The whole upgrade path on a running node: a daemon inside the root (as the package's
    /// account, with the system config, connected to the test gateway on loopback) has a 3 s
    /// system.run in flight when the update command installs the newer version; the package's
    /// postinst asks the daemon to restart, which waits for the command, answers it, and comes back
    /// with the same device id, presenting its stored token — one reconnect, no new pairing.
    @Test(arguments: SignedRepositorySetup.targets)
    func anUpgradeRestartsTheRunningDaemonAfterItsInvoke(_ t: Target) throws {
        let dir = TestPaths.tempDir("upgrade-live"); defer { try? FileManager.default.removeItem(atPath: dir) }
        let key = try Key(dir, "ours")
        try key.repo(t.deb, out: dir + "/repo")
        let (next, nextDeb) = try Self.nextVersion(of: t.deb, in: dir)
        let root = try ReleaseRoot(tarball: t.tarball); defer { root.cleanup() }
        try Self.trust(dir + "/repo", in: root, suite: t.suite)
        try Self.publish(dir + "/repo", in: root)
        let install = try root.run("apt-get update \(Self.only) >/dev/null && apt-get install -y --no-install-recommends openclaw-node 2>&1", timeout: 600)
        try #require(install.code == 0, "\(install.stdout)")
        let version = try root.run("dpkg-query -W -f='${Version}' openclaw-node").stdout

        let gw = try TestGateway(stateFile: dir + "/gw.json", args: ["--auto-approve"]); defer { gw.stop() }
        try FileManager.default.createDirectory(atPath: root.path + "/etc/openclaw-node/config.d", withIntermediateDirectories: true)
        try "{ gateway: { url: '\(gw.url)' }, capabilities: { system: { enabled: true } } }"
            .write(toFile: root.path + "/etc/openclaw-node/config.d/60-test.json5", atomically: true, encoding: .utf8)
        let daemon = try root.start("exec runuser -u openclaw-node -- env OPENCLAW_NODE_LOG=debug openclaw-node run --config /etc/openclaw-node/config.json5")
        defer { _ = daemon.stop() }
        let first = try #require(gw.waitFor("hello", timeout: 30), "\(daemon.log)")
        let deviceId = first["deviceId"]

        let params: JSONValue = ["command": ["/bin/sh", "-c", "sleep 3; echo done"]]
        gw.command(["cmd": "invoke", "id": "long-1", "command": "system.run", "timeoutMs": 60_000, "paramsJSON": .string(params.jsonString())])
        #expect(waitUntil(timeout: 10) { daemon.log.contains("system.run") }, "\(daemon.log)")
        try key.repo(nextDeb, out: dir + "/repo")
        try Self.publish(dir + "/repo", in: root)
        let connects = gw.all("connect").count
        let up = try root.run("openclaw-node update --config /etc/openclaw-node/config.json5 2>&1", timeout: 600)
        #expect(up.code == 0 && up.stdout.contains("upgraded openclaw-node \(version) → openclaw-node \(next)"), "\(up.stdout)")

        // The command's answer first, then one reconnect with the stored token, as the same device.
        let result = try #require(gw.waitFor("invoke_result", timeout: 20) { $0["id"] == "long-1" }, "\(daemon.log)")
        #expect(result["ok"] == true, "\(result)")
        let again = try #require(gw.waitFor("hello", timeout: 30), "\(daemon.log)")
        #expect(again["auth"] == ["deviceToken"] && again["deviceId"] == deviceId, "\(again)")
        #expect(gw.all("connect").count == connects + 1, "\(gw.all("connect").count - connects) reconnects")
        #expect(gw.all("pairing_requested").count <= 1)
        #expect(daemon.log.contains("restart asked for (upgrade from \(version))") && daemon.log.contains("nothing runs: restarting now"), "\(daemon.log)")
        let order = daemon.log.range(of: "stopping to restart")?.lowerBound, answered = daemon.log.range(of: "system.run")?.lowerBound
        #expect(order != nil && answered != nil && answered! < order!)
        #expect(gw.invoke("device.info")?["ok"] == true, "the restarted daemon answers")
        #expect(daemon.isRunning)
    }

    static let only = "-o Dir::Etc::sourcelist=/etc/apt/sources.list.d/openclaw-node.sources -o Dir::Etc::sourceparts=- -o APT::Get::List-Cleanup=0"

    /// The same package with a higher version (0.2.0+deb12 → 0.2.0.1+deb12): its version and file.
    static func nextVersion(of deb: String, in dir: String) throws -> (String, String) {
        let unpacked = dir + "/next"
        #expect(try runProcess("/usr/bin/dpkg-deb", ["-R", deb, unpacked]).code == 0)
        var control = try String(contentsOfFile: unpacked + "/DEBIAN/control", encoding: .utf8)
        let version = try #require(control.split(separator: "\n").first { $0.hasPrefix("Version: ") }.map { String($0.dropFirst(9)) })
        let plus = try #require(version.firstIndex(of: "+"))
        let next = String(version[..<plus]) + ".1" + String(version[plus...])
        control = control.replacingOccurrences(of: "Version: \(version)", with: "Version: \(next)")
        try control.write(toFile: unpacked + "/DEBIAN/control", atomically: true, encoding: .utf8)
        let nextDeb = dir + "/" + (deb as NSString).lastPathComponent.replacingOccurrences(of: version, with: next)
        let built = try runProcess("/usr/bin/dpkg-deb", ["--root-owner-group", "-Zxz", "-b", unpacked, nextDeb], timeout: 300)
        try #require(built.code == 0, "\(built.stderr)")
        return (next, nextDeb)
    }

    /// The repository's key and a deb822 source with Signed-By, in the root.
    static func trust(_ repo: String, in root: ReleaseRoot, suite: String) throws {
        let fm = FileManager.default
        try fm.createDirectory(atPath: root.path + "/etc/apt/keyrings", withIntermediateDirectories: true)
        try fm.copyItem(atPath: repo + "/openclaw-node-archive-keyring.gpg", toPath: root.path + "/etc/apt/keyrings/openclaw-node.gpg")
        try "Types: deb\nURIs: file:/srv/openclaw-node\nSuites: \(suite)\nComponents: main\nSigned-By: /etc/apt/keyrings/openclaw-node.gpg\n"
            .write(toFile: root.path + "/etc/apt/sources.list.d/openclaw-node.sources", atomically: true, encoding: .utf8)
    }

    /// The repository as it is now, at the source's path in the root.
    static func publish(_ repo: String, in root: ReleaseRoot) throws {
        _ = try runProcess("/bin/rm", ["-rf", root.path + "/srv/openclaw-node"])
        #expect(try runProcess("/bin/cp", ["-a", repo, root.path + "/srv/openclaw-node"]).code == 0)
    }
}

/// The packages and roots scripts/test prepared, or why the suite is skipped.
enum SignedRepositorySetup {
    struct Target: CustomTestStringConvertible, Sendable {
        let suite: String
        let deb: String
        let tarball: String
        var testDescription: String { suite }
    }

    static let env = ProcessInfo.processInfo.environment
    static let targets: [Target] = [
        env["OPENCLAW_TEST_DEB"].flatMap { d in env["OPENCLAW_TEST_ROOT_TARBALL"].map { Target(suite: d.contains("+deb13_") ? "trixie" : "bookworm", deb: d, tarball: $0) } },
        env["OPENCLAW_TEST_DEB13_AMD64"].flatMap { d in env["OPENCLAW_TEST_ROOT13_AMD64"].map { Target(suite: "trixie", deb: d, tarball: $0) } },
    ].compactMap { $0 }

    static var reasonToSkip: String? {
        if getuid() != 0 { return "not root: chroot and apt need root" }
        if targets.isEmpty { return "no package and Debian root prepared: scripts/test builds them (OPENCLAW_TEST_DEB, OPENCLAW_TEST_ROOT_TARBALL, …)" }
        return nil
    }
    static var skipComment: Comment { Comment(rawValue: reasonToSkip ?? "") }
}
