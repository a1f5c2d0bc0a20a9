import FoundationEssentials
import Glibc
import Kit
import Support

/// device.apps.launch: starts an application of the inventory by its id, the way a desktop does,
/// but only when its Exec line is one native (ELF) program that is not a shell or interpreter, with
/// the entry's own arguments: nothing from the caller reaches the command line.
enum AppLauncher {
    static let interpreters: Set<String> = ["sh", "bash", "dash", "zsh", "ksh", "fish", "env", "python", "python3", "perl", "ruby",
                                            "node", "nodejs", "php", "lua", "tclsh", "wish", "busybox", "sudo", "pkexec", "xterm"]

    static func launch(_ p: DeviceAppsLaunchParams, env: [String: String]) throws(NodeError) -> JSONValue {
        let id = p.appId ?? ""
        guard let entry = DesktopEntries.load(env, locale: nil).first(where: { $0.id == id }) else {
            throw NodeError.invalidRequest("no application with id \"\(id)\" (see device.apps)")
        }
        guard let exec = entry.exec, let argv = splitExec(exec), let first = argv.first else {
            throw NodeError.invalidRequest("\(entry.path) has no usable Exec line")
        }
        let found = first.contains("/") ? (Subprocess.isExecutableFile(first) ? first : nil) : Subprocess.findExecutable(first, path: env["PATH"])
        guard let path = found else {
            throw NodeError.unavailable("\(entry.label): \(first) is not installed")
        }
        guard !interpreters.contains(PathName.lastComponent(path)), isELF(path) else {
            throw NodeError.invalidRequest("\(entry.label) runs \(first) through a shell, interpreter or script; only desktop entries " +
                                           "that start one native program can be launched")
        }
        let child: Subprocess
        do {
            child = try Subprocess.spawn(path, Array(argv.dropFirst()), environment: env, stdin: .null, stdout: .null, stderr: .null,
                                         newProcessGroup: true, workingDirectory: PathName.home(env))
        } catch {
            throw NodeError.unavailable("cannot start \(entry.label): \(error.description)")
        }
        // The application outlives the command; a thread reaps it when it exits (no zombie).
        DetachedThread.start(name: "app-reaper") { child.wait() }
        return ["status": "process-started", "pid": .number(Double(child.pid))]
    }

    /// The Exec value split into arguments (the spec's quoting), with field codes dropped; nil when
    /// the quoting is broken.
    static func splitExec(_ exec: String) -> [String]? {
        var args: [String] = [], cur = "", inQuotes = false, inArg = false
        var chars = Array(exec)[...]
        while let c = chars.popFirst() {
            if inQuotes {
                if c == "\"" { inQuotes = false }
                else if c == "\\", let next = chars.popFirst() { cur.append(next) }
                else { cur.append(c) }
            } else if c == "\"" { inQuotes = true; inArg = true }
            else if c == " " || c == "\t" { if inArg { args.append(cur); cur = ""; inArg = false } }
            else if c == "%", let code = chars.popFirst() {
                if code == "%" { cur.append("%"); inArg = true }  // anything else is a field code: dropped
            } else { cur.append(c); inArg = true }
        }
        if inQuotes { return nil }
        if inArg { args.append(cur) }
        return args
    }

    static func isELF(_ path: String) -> Bool {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var magic = [UInt8](repeating: 0, count: 4)
        return read(fd, &magic, 4) == 4 && magic == [0x7F, 0x45, 0x4C, 0x46]
    }
}
