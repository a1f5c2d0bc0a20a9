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
        guard waitUntil(timeout: 15, { self.findSocket() != nil && self.ipcSocket != nil }) else {
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
        // swaybg paints a moment after the output appears.
        Thread.sleep(forTimeInterval: 0.5)
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

    /// Paints output `index` (1-based, as sway names them) a new colour.
    func paint(output index: Int, _ rgb: String) throws {
        try msg(["output", "HEADLESS-\(index)", "bg", rgb, "solid_color"])
    }

    func stop() {
        process?.stop()
        process = nil
        _ = try? runProcess("/bin/rm", ["-rf", dir])
    }
}
