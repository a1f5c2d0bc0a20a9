import Config
import Glibc
import Kit
import Support

/// One running Chromium with its DevTools pipe. Started with its own profile under the state
/// directory (0700), killed by PID when released.
final class BrowserProcess: Sendable {
    struct Options: Sendable {
        var executable: String
        var profileDir: String
        var window: Bool
        var display: String?
        var width = 1280
        var height = 720
    }

    let process: Subprocess
    let pipe: CDPPipe
    let options: Options

    /// Background services a browser would otherwise reach out to the internet for.
    static let quietFlags = [
        "--no-first-run", "--no-default-browser-check", "--disable-background-networking",
        "--disable-component-update", "--disable-domain-reliability", "--disable-client-side-phishing-detection",
        "--disable-sync", "--disable-default-apps", "--disable-extensions", "--disable-breakpad", "--no-pings",
        "--metrics-recording-only", "--password-store=basic", "--use-mock-keychain", "--mute-audio",
        "--disable-features=Translate,MediaRouter,OptimizationHints,AutofillServerCommunication",
        "--hide-scrollbars", "--disable-dev-shm-usage",
    ]

    static func arguments(_ o: Options) -> [String] {
        var a = ["--remote-debugging-pipe", "--user-data-dir=\(o.profileDir)"] + quietFlags
        // Chromium refuses to run its sandbox as root; as a normal user the sandbox stays on.
        // (--test-type keeps the window from showing a banner about that flag.)
        if geteuid() == 0 { a += ["--no-sandbox"] + (o.window ? ["--test-type"] : []) }
        if o.window {
            // An app window (no tabs, no address bar); --app ignores about:blank, hence a data: page.
            a += ["--ozone-platform=x11", "--app=data:text/html,%3Ctitle%3EOpenClaw%20Canvas%3C/title%3E", "--window-position=0,0",
                  "--window-size=\(o.width),\(o.height)", "--start-fullscreen", "--noerrdialogs",
                  "--disable-infobars", "--disable-session-crashed-bubble"]
        } else {
            // chromium-headless-shell is headless already; full chromium needs the switch.
            if !o.executable.hasSuffix("headless-shell") { a.append("--headless") }
            a += ["--disable-gpu", "--window-size=\(o.width),\(o.height)", "about:blank"]
        }
        return a
    }

    init(_ o: Options, onEvent: @escaping CDPPipe.EventHandler, onClose: @escaping @Sendable (String) -> Void) throws(NodeError) {
        options = o
        // The profile and its parents (the bundle's state directory) are the node's alone; an
        // existing profile is set back to 0700.
        if let why = PrivateDirectory.create(o.profileDir) { throw CanvasError.unavailable(why) }
        do { try FileSystem.setPermissions(o.profileDir, 0o700) } catch {
            throw CanvasError.unavailable("cannot make the browser profile private: \(error)")
        }
        // Close-on-exec from birth, so no other child (a plugin) holds the pipe and hides the browser's exit.
        guard let toBrowser = Subprocess.makePipe() else { throw CanvasError.unavailable("pipe: \(String(cString: strerror(errno)))") }
        guard let fromBrowser = Subprocess.makePipe() else {
            close(toBrowser.read); close(toBrowser.write)
            throw CanvasError.unavailable("pipe: \(String(cString: strerror(errno)))")
        }
        var env = ProcessEnvironment.current
        if o.window, let d = o.display { env["DISPLAY"] = d }
        // Chromium's own log, replaced at each start; read it when the browser misbehaves.
        let logFile = o.profileDir + "/browser.log"
        unlink(logFile)
        do {
            process = try Subprocess.spawn(o.executable, Self.arguments(o), environment: env, stdin: .null,
                                           stdout: .file(logFile), stderr: .file(logFile), newProcessGroup: true,
                                           extraFDs: [3: toBrowser.read, 4: fromBrowser.write])
        } catch {
            [toBrowser.read, toBrowser.write, fromBrowser.read, fromBrowser.write].forEach { _ = close($0) }
            throw CanvasError.unavailable("\(error)")
        }
        close(toBrowser.read)
        close(fromBrowser.write)
        pipe = CDPPipe(writeFD: toBrowser.write, readFD: fromBrowser.read, onEvent: onEvent, onClose: onClose)
    }

    var isRunning: Bool { process.isRunning && !pipe.isClosed }

    /// Stops the browser and everything it started (its process group), by PID.
    /// Blocks up to 3 s: call it off the cooperative pool.
    func stop() {
        // The whole group, even when the main process is already gone: its helpers (zygote,
        // renderers) may not be.
        kill(-process.pid, SIGTERM)
        _ = process.waitForExit(within: .seconds(3))
        kill(-process.pid, SIGKILL)
        process.wait()
        Self.removeSingletonDirectory(profileDir: options.profileDir)
    }

    /// Chromium (window mode) keeps its process-singleton socket in a fresh
    /// `$TMPDIR/org.chromium.Chromium.XXXXXX` and links it from the profile; a browser that was
    /// killed leaves that folder behind. Removed here, and only a folder of that name in the temp
    /// directory that the profile's own link points to.
    static func removeSingletonDirectory(profileDir: String) {
        let link = profileDir + "/SingletonSocket"
        guard let target = try? FileSystem.destinationOfSymbolicLink(link) else { return }
        let dir = PathName.directory(target)
        guard PathName.lastComponent(dir).hasPrefix("org.chromium.Chromium."),
              PathName.directory(dir) == PathName.tempDirectory(ProcessEnvironment.current) else { return }
        try? FileSystem.remove(dir)
        for name in ["SingletonSocket", "SingletonCookie", "SingletonLock"] { unlink(profileDir + "/" + name) }
    }
}
