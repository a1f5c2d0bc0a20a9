import DesktopSession
import Glibc
import Kit
import Support

/// The VNC server the node starts for one stream (`server: "auto"`): x11vnc for an X display,
/// wayvnc for a wlroots compositor, the node's own RFB server for GNOME (RFBServerSession over a
/// Mutter RemoteDesktop session, on one end of a socketpair: no socket file, no port). x11vnc and
/// wayvnc listen on a Unix socket in a fresh private directory (0700) and on no TCP port at all,
/// so no other account on the machine can reach them; each serves one client and is stopped, with
/// its whole process group, when the stream ends — or with the node, however it ends (the
/// process-tree reaper).
///
/// x11vnc gets a fresh random password (from a file it deletes once read: never on a command line)
/// that the gateway answers with. wayvnc 0.5 (Debian 12) cannot ask for a password, so it serves
/// without one on its private socket and the node itself asks the gateway for the password
/// (`nodeChecksPassword`): the gateway still reaches only an authenticated server.
final class LocalVNCServer: @unchecked Sendable {  // fields are set once in start; stop is idempotent through Subprocess
    enum Kind: String, Sendable { case x11vnc, wayvnc, gnome, kde }

    let kind: Kind
    /// The fresh password of this stream (8 characters: RFB's limit).
    let password: String
    let directory: String
    let socketPath: String
    private let process: Subprocess?
    private let inProcess: InProcessRFB?
    private let logFile: String

    /// wayvnc and the node's own server offer no password: the node runs the VNC authentication
    /// toward the gateway.
    var nodeChecksPassword: Bool { kind != .x11vnc }

    /// Which server would serve this session, its executable and what it serves, or why none. For
    /// the node's own servers: GNOME ("", the session bus address), KDE (the session bus address,
    /// the compositor's socket).
    static func choose(_ s: DesktopSettings) -> Result<(Kind, String, String), DesktopStreamError> {
        switch s.backend {
        case .auto: return chooseAuto(s)
        case .gnome:
            guard let address = s.sessionBus, let bus = try? SessionBus(address: address), bus.hasOwner(MutterRemoteDesktop.service) else {
                return .failure(.configuration("capabilities.desktop.backend is \"gnome\" but \(MutterRemoteDesktop.service) is not on the session bus " +
                                               "(\(s.sessionBus ?? "none known: DBUS_SESSION_BUS_ADDRESS is unset")): run the node inside the GNOME session"))
            }
            return .success((.gnome, "", address))
        case .kde:
            guard let address = s.sessionBus, let bus = try? SessionBus(address: address), let socket = s.waylandSocket, FileSystem.isSocket(socket),
                  KWinScreenShot.isOffered(on: bus) else {
                return .failure(.configuration("capabilities.desktop.backend is \"kde\" but KWin's ScreenShot2 and the compositor's socket are not both there " +
                                               "(session bus \(s.sessionBus ?? "unknown"), socket \(s.waylandSocket ?? "unknown")): run the node inside the Plasma session"))
            }
            return .success((.kde, address, socket))
        case .wayland:
            guard let socket = s.waylandSocket, FileSystem.isSocket(socket) else {
                return .failure(.configuration("capabilities.desktop.backend is \"wayland\" but no compositor socket is there " +
                                               "(capabilities.desktop.waylandDisplay, $WAYLAND_DISPLAY, or wayland-N in $XDG_RUNTIME_DIR)"))
            }
            return wayvnc(s, socket)
        case .x11:
            guard let display = s.display else {
                return .failure(.configuration("capabilities.desktop.backend is \"x11\" but no X display is known (capabilities.desktop.display, $DISPLAY)"))
            }
            return x11vnc(s, display)
        }
    }

    /// `backend: "auto"`: GNOME, then KDE, then a wlroots compositor, then the X display.
    private static func chooseAuto(_ s: DesktopSettings) -> Result<(Kind, String, String), DesktopStreamError> {
        // GNOME first: its Wayland socket is there too, but wayvnc cannot capture it.
        if let address = s.sessionBus, let bus = try? SessionBus(address: address) {
            if bus.hasOwner(MutterRemoteDesktop.service) { return .success((.gnome, "", address)) }
            // KDE: KWin's screenshots and fake input, for the compositor's socket.
            if let socket = s.waylandSocket, FileSystem.isSocket(socket), KWinScreenShot.isOffered(on: bus) {
                return .success((.kde, address, socket))
            }
        }
        if let socket = s.waylandSocket, FileSystem.isSocket(socket) { return wayvnc(s, socket) }
        if let display = s.display { return x11vnc(s, display) }
        return .failure(.configuration("desktop stream has no desktop to serve: no Wayland compositor socket (capabilities.desktop.waylandDisplay, $WAYLAND_DISPLAY) and no X display (capabilities.desktop.display, $DISPLAY)"))
    }

    private static func wayvnc(_ s: DesktopSettings, _ socket: String) -> Result<(Kind, String, String), DesktopStreamError> {
        guard let exe = Subprocess.findExecutable("wayvnc", path: s.environment["PATH"]) else {
            return .failure(.configuration("desktop stream needs wayvnc to serve the Wayland compositor at \(socket): install the wayvnc package (or run a VNC server yourself and set capabilities.desktop.server to \"external\")"))
        }
        return .success((.wayvnc, exe, socket))
    }

    private static func x11vnc(_ s: DesktopSettings, _ display: String) -> Result<(Kind, String, String), DesktopStreamError> {
        guard let exe = Subprocess.findExecutable("x11vnc", path: s.environment["PATH"]) else {
            return .failure(.configuration("desktop stream needs x11vnc to serve X display \(display): install the x11vnc package (or run a VNC server yourself and set capabilities.desktop.server to \"external\")"))
        }
        return .success((.x11vnc, exe, display))
    }

    private init(kind: Kind, password: String, directory: String, process: Subprocess?, inProcess: InProcessRFB? = nil, logFile: String) {
        self.kind = kind; self.password = password; self.directory = directory
        self.socketPath = directory + "/vnc.sock"; self.process = process; self.inProcess = inProcess; self.logFile = logFile
    }

    /// Starts the server under `parent` (the bundle's state directory) and waits until its socket
    /// accepts (≤ 10 s).
    static func start(_ s: DesktopSettings, under parent: String, cancel: CancelFlag, log: Logger) throws(DesktopStreamError) -> LocalVNCServer {
        let (kind, exe, target) = try choose(s).get()
        if let why = PrivateDirectory.create(parent) { throw .configuration("desktop stream: \(why)") }
        let dir = parent + "/stream-" + SecureRandom.bytes(6).map { $0.hex() }.joined()
        guard mkdir(dir, 0o700) == 0 else { throw .configuration("desktop stream: cannot create \(dir): \(String(cString: strerror(errno)))") }
        let password = freshPassword()
        let socket = dir + "/vnc.sock", logFile = dir + "/server.log"
        if kind == .gnome || kind == .kde {
            let served: InProcessRFB
            do throws(DesktopStreamError) {
                served = try InProcessRFB.start(log: log) { () throws(DesktopStreamError) -> any RFBDesktop & Sendable in
                    let bus: SessionBus
                    do throws(SessionBus.Failure) { bus = try SessionBus(address: kind == .gnome ? target : exe) } catch {
                        throw DesktopStreamError.serverUnavailable(error.description)
                    }
                    if kind == .kde { return try KdeRFBDesktop(bus: bus, socket: target) }
                    guard let pipewire = s.pipewire else {
                        throw DesktopStreamError.configuration("desktop stream on GNOME needs PipeWire, but XDG_RUNTIME_DIR is unset: run the node inside the desktop session")
                    }
                    return try GnomeRFBDesktop(bus: bus, pipewire: pipewire)
                }
            } catch {
                try? FileSystem.remove(dir)
                throw error
            }
            log.debug("started \(kind.rawValue) (pid \(getpid()), in process) for the \(kind == .gnome ? "GNOME" : "KDE Plasma") session")
            return LocalVNCServer(kind: kind, password: password, directory: dir, process: nil, inProcess: served, logFile: logFile)
        }
        var env = ["PATH": s.environment["PATH"] ?? "/usr/bin:/bin", "HOME": dir]
        let args: [String]
        switch kind {
        case .x11vnc:
            do { try FileSystem.write(Array((password + "\n").utf8), to: dir + "/password", mode: 0o600, atomically: false) }
            catch { try? FileSystem.remove(dir); throw .configuration("desktop stream: cannot write the VNC password file: \(error)") }
            if let xauth = s.environment["XAUTHORITY"] { env["XAUTHORITY"] = xauth }
            // -rfbport 0 and -rfbportv6 -1: no TCP listener (x11vnc 0.9.16 still listens on
            // [::]:5900 with -rfbport 0 and -noipv6 alone; -localhost cannot help, it refuses
            // the Unix socket's clients too); -passwdfile rm: the file is deleted once read;
            // -once: exit when the one client leaves; no remote control, no rc file, no ~/.vnc.
            args = ["-display", target, "-rfbport", "0", "-rfbportv6", "-1", "-unixsock", socket, "-passwdfile", "rm:" + dir + "/password",
                    "-once", "-norc", "-nocmds", "-noremote", "-nossl", "-noipv6", "-nopw", "-quiet", "-xkb"]
        case .wayvnc:
            env["WAYLAND_DISPLAY"] = target
            env["XDG_RUNTIME_DIR"] = s.environment["XDG_RUNTIME_DIR"] ?? dir
            // Its own empty config home: a user's ~/.config/wayvnc/config cannot change how it listens.
            env["XDG_CONFIG_HOME"] = dir
            args = ["--unix-socket", socket]
        case .gnome, .kde:
            args = []  // served in process, above
        }
        // Under the node's process-tree reaper, spawned from a thread that stays while it runs:
        // x11vnc lives in a process group of its own and ignores the end of its parent, so a node
        // killed mid-stream (SIGKILL, a crash) left it serving; the reaper ends it with the node.
        let (program, argv) = ProcessTreeReaper.wrap(exe, args, killOrphans: true) ?? (exe, args)
        let process: Subprocess
        do { process = try Subprocess.spawnOnOwnThread(name: "vnc-server", program, argv, environment: env, stdout: .file(logFile), stderr: .file(logFile), newProcessGroup: true) }
        catch { try? FileSystem.remove(dir); throw .configuration("desktop stream: cannot start \(kind.rawValue): \(error.description)") }
        let server = LocalVNCServer(kind: kind, password: password, directory: dir, process: process, logFile: logFile)
        log.debug("started \(kind.rawValue) (pid \(process.pid)) for \(target) on \(socket)")
        let deadline = ContinuousClock.now + .seconds(10)
        while !FileSystem.isSocket(socket) {
            if !process.isRunning || cancel.isCancelled || ContinuousClock.now > deadline {
                let why = cancel.isCancelled ? "cancelled" : process.isRunning ? "its socket did not appear within 10 s" : "it exited: \(server.logTail)"
                server.stop()
                throw cancel.isCancelled ? .cancelled : .serverUnavailable("\(kind.rawValue) could not serve \(target): \(why)")
            }
            _ = cancel.sleep(milliseconds: 20)
        }
        return server
    }

    /// A connection to it. A server makes its socket file (bind) a moment before it listens on
    /// it, and a connection in between is refused: refused ones are tried again, every 20 ms,
    /// while the server runs, for at most the 10 s a fresh server has to start. (Not probed
    /// earlier: x11vnc serves one client, and a probe would be it.)
    func connect(cancel: CancelFlag) throws(DesktopStreamError) -> RFBSocket {
        if let inProcess { return try inProcess.connect() }
        let deadline = ContinuousClock.now + .seconds(10)
        while true {
            do { return RFBSocket(try TCPSocket.connect(unixPath: socketPath)) } catch {
                let listensSoon = error.errno == Errno(ECONNREFUSED) && process?.isRunning == true && ContinuousClock.now < deadline
                guard listensSoon, cancel.sleep(milliseconds: 20) else {
                    throw cancel.isCancelled ? .cancelled : .serverUnavailable("\(kind.rawValue): \(error.description)")
                }
            }
        }
    }

    /// Stops the server's process group (SIGTERM, then SIGKILL after 2 s) and removes its directory.
    func stop() {
        inProcess?.stop()
        if let process {
            if process.isRunning {
                kill(-process.pid, SIGTERM)
                if !process.waitForExit(within: .seconds(2)) { kill(-process.pid, SIGKILL) }
            }
            _ = process.wait()
        }
        try? FileSystem.remove(directory)
    }

    /// The server's process (the node's own for the in-process server).
    var pid: pid_t { process?.pid ?? getpid() }

    /// The last lines it wrote, for the error that says why it did not start.
    var logTail: String {
        let text = FileSystem.readText(logFile) ?? ""
        let lines = text.split(separator: "\n").suffix(3).joined(separator: " | ")
        return lines.isEmpty ? "no output" : String(lines.suffix(400))
    }

    /// 8 characters from 64 (48 bits): RFB keeps only the first 8 bytes of a password.
    static func freshPassword() -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        return String(SecureRandom.bytes(VNCAuthentication.maxPasswordBytes).map { alphabet[Int($0 & 63)] })
    }
}
