import DesktopSession
import Foundation
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
    @Test func approvedOnceThenCapturesWithoutAskingAgainAndADeclineIsSaid() throws {
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
        let (first, answers) = try withPerson(.share, gnome) { try node.snapshot() }
        #expect(first["width"] == 1280 && first["height"] == 720, "\(first)")
        #expect((1...3).contains(answers), "the dialog was answered \(answers) times before it went away")
        let token = node.state + "/screen/portal-restore-token"
        let attributes = try FileManager.default.attributesOfItem(atPath: token)
        #expect(attributes[.posixPermissions] as? Int == 0o600 && attributes[.ownerAccountName] as? String == "nobody", "\(attributes)")

        // A new process, with someone watching the screen who does not answer: the kept approval,
        // no dialog ever shows, and the screen is the probe window again, exactly.
        let (unattended, dialogs) = try withPerson(.nobody, gnome) { try node.snapshot() }
        #expect(dialogs == 0, "the portal asked again (the dialog showed in \(dialogs) frame(s))")
        let again = try ImageChecks.image(unattended)
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
        let (declined, _) = try withPerson(.cancel, gnome) { try other.invoke(#"{"format": "png"}"#) }
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

    enum Answer: String { case share, cancel, nobody }

    /// Runs `body` (a node process that may ask) while a person at the desktop answers the portal's
    /// dialog with `answer` (`nobody`: only watches) whenever they see it, and returns its result
    /// and how often the dialog was answered (`nobody`: seen). The screen is watched through a
    /// Mutter cast of its own (as root, which the bus does not refuse): Mutter sends a frame when
    /// the screen changes — the dialog coming or going — and each frame that shows the dialog's
    /// white body over the red probe window gets one answer (Tests/gnome/person_answers_share.py).
    private func withPerson<T>(_ answer: Answer, _ gnome: GnomeShell, _ body: () throws -> T) throws -> (result: T, answers: Int) {
        let person = try PersonAtDesktop(answer, gnome)
        do {
            let result = try body()
            return (result, try person.leave())
        } catch {
            throw TestFailure("\(error); the person answered the dialog \((try? person.leave()) ?? 0) time(s)")
        }
    }

    /// The person's eyes and hands, on a thread of their own for as long as `body` runs.
    final class PersonAtDesktop: @unchecked Sendable {  // the counters are read after the thread ends
        private let done = CancelFlag()
        private let finished = DispatchSemaphore(value: 0)
        private var answers = 0
        private var failure: Error?

        init(_ answer: Answer, _ gnome: GnomeShell) throws {
            let (width, height, connector) = (gnome.monitors[0].width, gnome.monitors[0].height, gnome.monitors[0].connector)
            let (address, pipewire, environment) = (gnome.sessionBus, gnome.pipewireSocket, gnome.environment)
            let watching = DispatchSemaphore(value: 0)
            Thread { [self] in
                defer { finished.signal() }
                // The cast is the thread's: made, used and ended here (sd-bus is one thread's at a time).
                // One that fails is ended inside watch(), before init hears of it: the test may then
                // stop GNOME at once, which must not happen under a cast still being taken down.
                let cast: MutterScreenCast
                do {
                    cast = try Self.watch(address, connector, pipewire)
                } catch {
                    failure = error
                    watching.signal()
                    return
                }
                watching.signal()
                var frame: UInt64 = 0
                while !done.isCancelled {
                    // A frame comes when the screen changes; with none for a second, the last one
                    // is looked at again (an answer that did not take leaves the dialog there).
                    if let next = try? cast.stream.waitForFrame(after: frame, timeout: .seconds(1), cancel: done) { frame = next }
                    guard !done.isCancelled, Self.showsDialog(cast.stream, width: width, height: height) else { continue }
                    answers += 1
                    guard answer != .nobody else { continue }
                    do {
                        let r = try runProcess("/usr/bin/python3", [TestPaths.repoRoot + "/Tests/gnome/person_answers_share.py", answer.rawValue,
                                                                   connector, String(width), String(height)], env: environment)
                        if r.code != 0 { throw TestFailure("the person could not answer: \(r.stdout)\(r.stderr)") }
                        // A person who clicked watches the dialog go (GNOME takes its time on a busy
                        // machine) and clicks again only if it is still there 5 s later.
                        let clicked = ContinuousClock.now
                        while !done.isCancelled, ContinuousClock.now - clicked < .seconds(5),
                              Self.showsDialog(cast.stream, width: width, height: height) {
                            if let next = try? cast.stream.waitForFrame(after: frame, timeout: .seconds(1), cancel: done) { frame = next }
                        }
                    } catch {
                        failure = error
                        return
                    }
                }
            }.start()
            watching.wait()
            if let failure { done.cancel(); throw failure }
        }

        /// A Mutter cast of the monitor, once its first frame came (a busy machine's gnome-shell
        /// can take a while); a cast that fails is ended here.
        private static func watch(_ address: String, _ connector: String, _ pipewire: String) throws -> MutterScreenCast {
            let bus = try SessionBus(address: address)
            let monitor = try #require(try MutterDisplays.monitors(bus).first { $0.connector == connector })
            let cast = try MutterScreenCast(bus: bus, pipewire: .socket(pipewire), monitor: monitor, cursor: .hidden)
            _ = try cast.stream.waitForFrame(timeout: .seconds(30))
            return cast
        }

        /// The dialog's list, below the monitor's centre: white (green high) where the probe window is red.
        private static func showsDialog(_ stream: PipeWireStream, width: Int, height: Int) -> Bool {
            stream.withLatestFrame { (f: PipeWireFrame) -> Bool in
                let (x, y) = (min(width, f.width) / 2, min(height, f.height) / 2 + 41)
                return f.base.load(fromByteOffset: y * f.bytesPerRow + x * 4 + 1, as: UInt8.self) > 128  // G, in BGRx and RGBx alike
            } ?? false
        }

        /// Stops watching and says how often the dialog was answered (or seen), or what went wrong.
        func leave() throws -> Int {
            if !done.isCancelled {
                done.cancel()
                finished.wait()
            }
            if let failure { throw failure }
            return answers
        }
    }
}
