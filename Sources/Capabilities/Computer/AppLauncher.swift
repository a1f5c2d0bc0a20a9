import Glibc
import Kit
import Support

/// device.apps.launch: starts an application of the inventory by its id, the way a desktop does,
/// under upstream's Linux rule: the entry's Exec is one token — a single program, no arguments,
/// no field codes — that resolves to a native (ELF) executable which is not an interpreter and
/// which no one but root or the node's account could have replaced. Nothing from the caller
/// reaches the command line; the program starts with the node's environment, which holds no
/// gateway credentials (NodeSecrets).
enum AppLauncher {
    /// Programs that run whatever they are given, by their name without version digits (python3.11 → python).
    static let interpreters: Set<String> = ["sh", "bash", "dash", "zsh", "ksh", "fish", "env", "python", "perl", "ruby", "node",
                                            "nodejs", "php", "lua", "luajit", "tclsh", "wish", "busybox", "sudo", "pkexec", "xterm",
                                            "awk", "mawk", "gawk", "nawk", "find", "xargs", "ld-linux-x86-64.so", "ld-linux-aarch64.so",
                                            "rbash", "csh", "tcsh", "guile", "java", "osascript", "expect", "gdb", "script", "nohup",
                                            "setsid", "timeout", "nice", "ionice", "strace", "ltrace", "valgrind", "systemd-run"]

    static func launch(_ p: DeviceAppsLaunchParams, env: [String: String]) throws(NodeError) -> DeviceAppsLaunchResult {
        let id = p.id
        guard let entry = DesktopEntries.load(env, locale: nil).first(where: { $0.id == id }) else {
            throw NodeError.invalidRequest("no application with id \"\(id)\" (see device.apps)")
        }
        let path = try executable(of: entry, env: env)
        let child: Subprocess
        do {
            child = try Subprocess.spawn(path, [], environment: env, stdin: .null, stdout: .null, stderr: .null,
                                         newProcessGroup: true, workingDirectory: PathName.home(env))
        } catch {
            throw NodeError.unavailable("cannot start \(entry.label): \(error.description)")
        }
        // The application outlives the command; a loop thread (not a job slot: it may run for
        // hours) reaps it when it exits (no zombie).
        BlockingExecutor.startLoop(name: "app-reaper") { child.wait() }
        return DeviceAppsLaunchResult(pid: child.pid)
    }

    /// The one program the entry starts, resolved and checked, or why it cannot be launched.
    static func executable(of entry: DesktopEntry, env: [String: String]) throws(NodeError) -> String {
        guard let exec = entry.exec, let token = singleToken(exec) else {
            throw NodeError.invalidRequest("\(entry.label): its Exec line (\(entry.exec ?? "none")) is not a single program without arguments; " +
                                           "only such desktop entries can be launched")
        }
        let found = token.hasPrefix("/") ? (Subprocess.isExecutableFile(token) ? token : nil)
            : Subprocess.findExecutable(token, path: env["PATH"] ?? "/usr/local/bin:/usr/bin:/bin")
        guard let found else { throw NodeError.unavailable("\(entry.label): \(token) is not installed") }
        let real = PathName.resolvingSymlinks(found)
        guard isELF(real), !interpreters.contains(baseName(real)) else {
            throw NodeError.invalidRequest("\(entry.label) runs \(token) (\(real)), a shell, interpreter or script; only desktop entries " +
                                           "that start one native program can be launched")
        }
        if let why = FileTrust.problem(real) {
            throw NodeError.invalidRequest("\(entry.label): refused \(real): \(why)")
        }
        return real
    }

    /// The program of an Exec value that is exactly one token (upstream's grammar): unquoted with
    /// no whitespace or shell characters, or one double-quoted string whose only escapes are
    /// \" \\ \$ \`; no control characters, `%` or `=`. nil otherwise.
    static func singleToken(_ exec: String) -> String? {
        let s = exec.trimmed()
        guard !s.isEmpty, !s.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }),
              !s.contains("%"), !s.contains("=") else { return nil }
        if s.hasPrefix("\"") {
            guard s.count >= 2, s.hasSuffix("\"") else { return nil }
            var out = "", chars = Array(s.dropFirst().dropLast())[...]
            while let c = chars.popFirst() {
                if c == "\"" { return nil }
                if c == "\\" {
                    guard let next = chars.popFirst(), "\"\\$`".contains(next) else { return nil }
                    out.append(next)
                } else { out.append(c) }
            }
            return out.isEmpty ? nil : out
        }
        let forbidden: Set<Character> = ["\"", "'", "\\", ">", "<", "~", "|", "&", ";", "$", "*", "?", "#", "(", ")", "`", " ", "\t"]
        return s.contains(where: { forbidden.contains($0) }) ? nil : s
    }

    /// "python3.11" → "python", "ld-linux-x86-64.so.2" → "ld-linux-x86-64.so".
    static func baseName(_ path: String) -> String {
        var name = PathName.lastComponent(path)
        while let last = name.last, last.isNumber || last == "." { name.removeLast() }
        return name
    }

    static func isELF(_ path: String) -> Bool {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var magic = [UInt8](repeating: 0, count: 4)
        return read(fd, &magic, 4) == 4 && magic == [0x7F, 0x45, 0x4C, 0x46]
    }
}
