import Foundation
@testable import Support

/// Debian's sway on its headless backend, started for one test: a real wlroots compositor with
/// wlr-screencopy. sway refuses to run as root, so it runs as `nobody` (setpriv) in a runtime
/// directory of its own under /tmp; root clients (the node under test) still reach its socket.
/// Outputs show solid colours (`output … bg #rrggbb solid_color`), which swaybg paints.
final class Sway: @unchecked Sendable {
    let dir: String
    let runtimeDir: String
    private(set) var process: BackgroundProcess?
    /// Absolute path of the compositor's socket (capabilities.screen.waylandDisplay).
    private(set) var socket = ""

    static var available: Bool {
        getuid() == 0 && ["/usr/bin/sway", "/usr/bin/setpriv", "/usr/bin/tini"].allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// `outputs`: resolution and colour of each headless output, left to right.
    init(outputs: [(width: Int, height: Int, rgb: String)]) throws {
        // Not under $TMPDIR: that folder is root's (0700) and nobody could not enter it.
        var template = Array("/tmp/ocn-sway-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw TestFailure("mkdtemp failed") }
        dir = String(cString: made)
        TempDirs.register(dir)
        runtimeDir = dir + "/run"
        try FileManager.default.createDirectory(atPath: runtimeDir, withIntermediateDirectories: true)
        let config = ["xwayland disable",
                      "output HEADLESS-1 resolution \(outputs[0].width)x\(outputs[0].height) position 0 0 bg \(outputs[0].rgb) solid_color"]
        try config.joined(separator: "\n").write(toFile: dir + "/sway.conf", atomically: false, encoding: .utf8)
        _ = try runProcess("/bin/chown", ["-R", "65534:65534", dir])
        chmod(dir, 0o755); chmod(runtimeDir, 0o700)
        // tini: a subreaper that passes our SIGTERM on to sway and reaps sway's swaybg (which would
        // otherwise be left a zombie); --pdeathsig: sway goes when the test process does.
        process = try BackgroundProcess("/usr/bin/tini", ["-s", "-g", "--", "/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                                                          "--pdeathsig=SIGTERM", "/usr/bin/sway", "-c", dir + "/sway.conf"],
                                        env: ["XDG_RUNTIME_DIR": runtimeDir, "WLR_BACKENDS": "headless", "HOME": dir, "PATH": "/usr/bin:/bin"])
        // The IPC socket's file is there from its bind(), a moment before it listens: sway is up
        // once it answers on it (its Wayland socket listens before its IPC does).
        guard waitUntil(timeout: 30, { self.findSocket() != nil && self.ipcSocket != nil && (try? self.msg(["-t", "get_version"])) != nil }) else {
            let log = process?.log ?? ""
            stop()
            throw TestFailure("sway did not start:\n\(log.suffix(2000))")
        }
        socket = runtimeDir + "/" + findSocket()!
        var x = outputs[0].width
        for (i, o) in outputs.enumerated().dropFirst() {
            try msg(["create_output"])
            try msg(["output", "HEADLESS-\(i + 1)", "resolution", "\(o.width)x\(o.height)", "position", "\(x)", "0", "bg", o.rgb, "solid_color"])
            x += o.width
        }
        // swaybg paints a moment after the output appears: each output is used once it shows its colour.
        for (i, o) in outputs.enumerated() where !shows(output: i + 1, o.rgb) {
            let log = process?.log ?? ""
            stop()
            throw TestFailure("sway's output HEADLESS-\(i + 1) did not show \(o.rgb) within 20 s:\n\(log.suffix(2000))")
        }
    }

    /// Waits until output `index` (1-based) shows `rgb` (`#rrggbb`) at its centre, read back with
    /// grim (wlr-screencopy): swaybg paints a moment after it is told, on a busy machine later.
    func shows(output index: Int, _ rgb: String, timeout: TimeInterval = 20) -> Bool {
        guard let want = UInt32(rgb.dropFirst(), radix: 16) else { return false }
        let file = dir + "/shows-\(index).ppm"
        let env = ["WAYLAND_DISPLAY": socket, "XDG_RUNTIME_DIR": runtimeDir, "PATH": "/usr/bin:/bin"]
        return waitUntil(timeout: timeout) {
            guard (try? runProcess("/usr/bin/grim", ["-o", "HEADLESS-\(index)", "-t", "ppm", file], env: env))?.code == 0,
                  let ppm = FileManager.default.contents(atPath: file) else { return false }
            return Self.centre(ofPPM: [UInt8](ppm)) == want
        }
    }

    /// The pixel at the centre of a binary PPM (P6, maxval 255) as 0xRRGGBB.
    static func centre(ofPPM b: [UInt8]) -> UInt32? {
        // The header: "P6", width, height, maxval, separated by whitespace, one whitespace byte after.
        var fields: [Int] = [], i = 2, current = ""
        guard b.count > 2, b[0] == UInt8(ascii: "P"), b[1] == UInt8(ascii: "6") else { return nil }
        while i < b.count && fields.count < 3 {
            let c = Character(UnicodeScalar(b[i]))
            if c.isWhitespace { if !current.isEmpty { fields.append(Int(current) ?? 0); current = "" } } else { current.append(c) }
            i += 1
        }
        guard fields.count == 3, fields[2] == 255 else { return nil }
        let (w, h) = (fields[0], fields[1])
        let at = i + ((h / 2) * w + w / 2) * 3
        guard at + 2 < b.count else { return nil }
        return UInt32(b[at]) << 16 | UInt32(b[at + 1]) << 8 | UInt32(b[at + 2])
    }

    private func findSocket() -> String? {
        ((try? FileManager.default.contentsOfDirectory(atPath: runtimeDir)) ?? [])
            .first { $0.hasPrefix("wayland-") && !$0.hasSuffix(".lock") }
    }

    private var ipcSocket: String? {
        ((try? FileManager.default.contentsOfDirectory(atPath: runtimeDir)) ?? []).first { $0.hasPrefix("sway-ipc.") }.map { runtimeDir + "/" + $0 }
    }

    /// `swaymsg ARGS` against this compositor.
    func msg(_ args: [String]) throws {
        let r = try runProcess("/usr/bin/swaymsg", ["-s", ipcSocket ?? ""] + args)
        guard r.code == 0 else { throw TestFailure("swaymsg \(args.joined(separator: " ")) failed: \(r.stdout)\(r.stderr)") }
    }

    /// Paints output `index` (1-based, as sway names them) a new colour, and waits until it shows.
    func paint(output index: Int, _ rgb: String) throws {
        try msg(["output", "HEADLESS-\(index)", "bg", rgb, "solid_color"])
        guard shows(output: index, rgb) else { throw TestFailure("output HEADLESS-\(index) did not show \(rgb) within 20 s") }
    }

    func stop() {
        process?.stop()
        process = nil
        _ = try? runProcess("/bin/rm", ["-rf", dir])
    }
}
