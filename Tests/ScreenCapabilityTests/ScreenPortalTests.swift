import Foundation
import Media
@testable import ScreenCapability
@testable import Support
@testable import TestSupport
import Testing

/// screen.snapshot through the desktop portal on a real GNOME (gnome-shell 43 headless with
/// xdg-desktop-portal and its GNOME backend), for a node that Mutter's own API is closed to: the
/// session bus refuses the node's account every call to Mutter's screen cast (AccessDenied, as a
/// GNOME that closed the API to other programs answers), so `auto` falls back to the portal. The
/// real `openclaw-node` runs as that account (nobody), one process per command, as after a
/// restart each time. A person at the desktop (Tests/gnome/person_answers_share.py, clicking
/// through Mutter's RemoteDesktop as root) answers GNOME's Screen Share dialog.
@Suite(.serialized, .enabled(if: GnomeShell.available && GnomeShell.portalAvailable,
                             "needs root, gnome-shell, PipeWire, GTK 4 and xdg-desktop-portal-gnome (scripts/setup installs them)"))
struct ScreenPortalTests {
    @Test func approvedOnceThenCapturesWithoutAskingAgainAndADeclineIsSaid() async throws {
        let gnome = try GnomeShell(monitors: [(1280, 720, "#ff0000")], refuseMutterTo: "nobody")
        defer { gnome.stop() }
        try gnome.startPortal()
        // The node's account reaches the session's bus socket (the directory is the session's own).
        chmod(gnome.runtimeDir, 0o711)
        let node = try NodeAsNobody(gnome)
        defer { node.remove() }

        let before = try node.run(["doctor", "--config", node.config]).stdout
        #expect(before.contains("[warn] screen: backend auto: captures through the desktop portal's screen cast")
                && before.contains("asks the person at this desktop before the first capture")
                && before.contains("GNOME's Mutter refuses this program its screen cast (org.freedesktop.DBus.Error.AccessDenied)"), "\(before)")

        // Nobody has approved: the dialog comes up and the person shares the monitor.
        let first = try await withPerson(.share, gnome) { try node.snapshot() }
        #expect(first["width"] == 1280 && first["height"] == 720, "\(first)")
        let token = node.state + "/screen/portal-restore-token"
        let attributes = try FileManager.default.attributesOfItem(atPath: token)
        #expect(attributes[.posixPermissions] as? Int == 0o600 && attributes[.ownerAccountName] as? String == "nobody", "\(attributes)")

        // A new process, nobody at the desktop: the kept approval, no dialog (one would hold the
        // capture until its 60 s), and the dialog is gone: the probe window, exactly.
        let started = Date()
        let again = try ImageChecks.image(try node.snapshot())
        #expect(Date().timeIntervalSince(started) < 15)
        for y in stride(from: 0, to: 720, by: 47) { for x in stride(from: 0, to: 1280, by: 53) { #expect(ImageChecks.near(again.pixel(x: x, y: y), 0xff0000, tolerance: 0), "(\(x),\(y))") } }
        // A recording through the same kept approval: a still screen gives a clip of the asked
        // length, the probe window's colour in it.
        let clip = try ScreenRecordTests.write(try node.invoke(#"{"durationMs": 1500, "fps": 10}"#, command: "screen.record"))
        defer { try? FileManager.default.removeItem(atPath: (clip as NSString).deletingLastPathComponent) }
        let probe = try ImageChecks.ffprobe(clip)
        #expect(abs((Double(probe["format"]?["duration"]?.stringValue ?? "") ?? 0) - 1.5) < 0.2, "\(probe)")
        #expect(ImageChecks.near(try ImageChecks.frame(of: clip, at: 1.0).pixel(x: 640, y: 360), 0xff0000, tolerance: 16))
        let after = try node.run(["doctor", "--config", node.config]).stdout
        #expect(after.contains("[ok  ] screen: backend auto: captures through the desktop portal's screen cast") && after.contains("kept in \(token)"), "\(after)")
        let missing = try node.invoke(#"{"screenIndex": 1}"#)
        #expect(missing["message"]?.stringValue?.contains("the desktop portal shares 1 monitor(s)") == true, "\(missing)")

        // Another node with nothing kept, and a person who declines: said so, nothing kept.
        let other = try NodeAsNobody(gnome)
        defer { other.remove() }
        let declined = try await withPerson(.cancel, gnome) { try other.invoke(#"{"format": "png"}"#) }
        #expect(declined["message"]?.stringValue?.contains("declined to share the screen") == true, "\(declined)")
        #expect(!FileManager.default.fileExists(atPath: other.state + "/screen/portal-restore-token"))
    }

    /// The real node as the account the bus refuses Mutter to, with a state directory of its own.
    struct NodeAsNobody: Sendable {
        let dir: String, config: String, state: String
        let environment: [String: String]

        init(_ gnome: GnomeShell) throws {
            dir = TestPaths.tempDir("portal-node")
            config = dir + "/config.json5"
            state = dir + "/state"
            try "{ node: { stateDir: '\(state)' }, presence: { mode: 'manual' }, capabilities: { screen: { enabled: true }, camera: { enabled: false } } }"
                .write(toFile: config, atomically: false, encoding: .utf8)
            _ = try runProcess("/bin/chown", ["-R", "nobody:nogroup", dir])
            environment = ["HOME": dir, "PATH": "/usr/bin:/bin", "XDG_RUNTIME_DIR": gnome.runtimeDir, "DBUS_SESSION_BUS_ADDRESS": gnome.sessionBus,
                           "WAYLAND_DISPLAY": "wayland-0", "XDG_SESSION_TYPE": "wayland", "TMPDIR": dir]
        }

        func run(_ args: [String], timeout: TimeInterval = 60) throws -> ProcessResult {
            try runProcess("/usr/bin/setpriv", ["--reuid=nobody", "--regid=nogroup", "--clear-groups", TestPaths.nodeBinary] + args,
                           env: environment, timeout: timeout)
        }

        /// `invoke COMMAND` run locally: the payload, or the error object.
        func invoke(_ params: String, command: String = "screen.snapshot") throws -> JSONValue {
            let r = try run(["invoke", command, "--local", "--config", config, "--timeout", "90000", "--params", params], timeout: 120)
            guard let value = JSONValue.parse(r.stdout) else { throw TestFailure("not JSON: \(r.stdout)\(r.stderr)") }
            return value
        }

        func snapshot() throws -> JSONValue {
            let payload = try invoke(#"{"format": "png", "maxWidth": 1280, "includePointer": false}"#)
            guard payload["base64"] != nil else { throw TestFailure("no picture: \(payload)") }
            return payload
        }

        func remove() { try? FileManager.default.removeItem(atPath: dir) }
    }

    enum Answer: String { case share, cancel }

    /// Runs `body` (a node process that may ask) while a person at the desktop answers the portal's
    /// dialog with `answer` whenever they see it: the screen is watched through Mutter's own cast
    /// (as root, which the bus does not refuse) for the dialog's white body over the red probe
    /// window, and each time it is there the person clicks once (Tests/gnome/person_answers_share.py).
    private func withPerson<T: Sendable>(_ answer: Answer, _ gnome: GnomeShell, _ body: @escaping @Sendable () throws -> T) async throws -> T {
        let eyes = ScreenCapability(settings: ScreenSettings(backend: .gnome, sessionBus: gnome.sessionBus, pipewire: .socket(gnome.pipewireSocket)))
        let (width, height) = (gnome.monitors[0].width, gnome.monitors[0].height)
        let node = Task.detached { try body() }
        let watching = Task {
            var answered = 0
            while !Task.isCancelled {
                let seen = try ImageChecks.image(try await ScreenTest.invoke(eyes, .snapshot, #"{"format": "png", "maxWidth": 1280, "includePointer": false}"#))
                // The dialog's list, below its centre: white where the probe window is red.
                if !ImageChecks.near(seen.pixel(x: width / 2, y: height / 2 + 41), 0xff0000, tolerance: 40) {
                    let r = try runProcess("/usr/bin/python3", [TestPaths.repoRoot + "/Tests/gnome/person_answers_share.py", answer.rawValue,
                                                               gnome.monitors[0].connector, String(width), String(height)], env: gnome.environment)
                    if r.code != 0 { throw TestFailure("the person could not answer: \(r.stdout)\(r.stderr)") }
                    answered += 1
                }
                try await Task.sleep(for: .milliseconds(300))
            }
            return answered
        }
        do {
            let result = try await node.value
            watching.cancel()
            let times = (try? await watching.value) ?? 0
            #expect(times <= 3, "the dialog was answered \(times) times before it went away")
            return result
        } catch {
            watching.cancel()
            throw TestFailure("\(error); the person answered the dialog \((try? await watching.value) ?? 0) time(s)")
        }
    }
}
