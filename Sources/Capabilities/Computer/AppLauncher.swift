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
    static let launchFailed: NodeError.Code = "INSTALLED_APP_LAUNCH_FAILED"
    /// How long the gateway has to answer the ready chunk.
    static let permitWait: Duration = .seconds(10)

    static func failed(_ message: String) -> NodeError { NodeError(launchFailed, verbatim: message) }

    /// Upstream's launch (docs/PROTOCOL.md "device.apps"): the app and revision must still be what
    /// the caller authorized; over a gateway the node says it is ready, waits ≤ 10 s for the
    /// gateway's allow, checks the entry again and spawns within the allow's `validForMs`. Over the
    /// control socket (a local user, no gateway) there is nobody to ask, and it starts at once.
    static func launch(_ p: DeviceAppsLaunchParams, env: [String: String], duplex: DuplexChannel,
                       clock: any NodeClock) async throws(NodeError) -> DeviceAppsLaunchResult {
        let changed = "INSTALLED_APP_CHANGED: refresh device.apps and explicitly authorize the current app"
        guard let entry = current(p.id, env), p.appRevision == nil || p.appRevision == entry.appRevision else { throw failed(changed) }
        if let command = p.execution?.command, command != [entry.executable] {
            throw failed("INSTALLED_APP_CHANGED: execution plan does not match the exact app")
        }
        // An approved plan must be one system.run.prepare bound to this app and revision.
        if p.execution?.systemRunPlan != nil {
            guard let bound = p.execution?.planBinding, bound == (entry.appId, entry.appRevision) else {
                throw failed("INSTALLED_APP_CHANGED: approval plan does not bind this app revision")
            }
        }
        let path = try executable(of: entry)
        var spawnBy: ContinuousClock.Instant?
        if duplex.isOpen {
            let ready: JSONValue = ["type": "installed-app-launch.ready", "appId": .string(entry.appId), "appRevision": .string(entry.appRevision)]
            let sentAt = ContinuousClock.now
            guard await duplex.write(ready.jsonString()) else { throw failed("Installed-app authorization timed out") }
            let validFor = try await permit(duplex, clock: clock)
            spawnBy = sentAt + .milliseconds(validFor)
            guard let again = current(p.id, env), again == entry else { throw failed("INSTALLED_APP_CHANGED: launch descriptor changed before execution") }
        }
        if let spawnBy, ContinuousClock.now > spawnBy { throw failed("Installed-app authorization expired before spawn") }
        let child: Subprocess
        do {
            child = try Subprocess.spawn(path, [], environment: env, stdin: .null, stdout: .null, stderr: .null,
                                         newProcessGroup: true, workingDirectory: PathName.home(env))
        } catch {
            throw failed("cannot start \(entry.label): \(error.description)")
        }
        // The application outlives the command; a loop thread (not a job slot: it may run for
        // hours) reaps it when it exits (no zombie).
        BlockingExecutor.startLoop(name: "app-reaper") { child.wait() }
        return DeviceAppsLaunchResult(appId: entry.appId, appRevision: entry.appRevision, pid: child.pid)
    }

    /// The entry with this appId in the inventory as it is now.
    static func current(_ appId: String, _ env: [String: String]) -> DesktopEntry? {
        DesktopEntries.load(env, locale: nil).entries.first { $0.appId == appId }
    }

    /// The gateway's answer to the ready chunk: the allow's validForMs (1…5000), or why not.
    static func permit(_ duplex: DuplexChannel, clock: any NodeClock) async throws(NodeError) -> Int {
        let answer = await firstInput(duplex, within: permitWait, clock: clock)
        guard case .some(.some(let text)) = answer else { throw failed("Installed-app authorization timed out") }
        let value = JSONValue.parse(text)
        switch value?["type"]?.stringValue {
        case "installed-app-launch.allow":
            guard let ms = value?["validForMs"]?.intValue, (1...5000).contains(ms) else {
                throw failed("Installed-app authorization is no longer current")
            }
            return ms
        default:
            throw failed("Installed-app authorization is no longer current")
        }
    }

    /// The caller's first input, nil when `within` passed first (or the invoke ended: .some(nil)).
    static func firstInput(_ duplex: DuplexChannel, within: Duration, clock: any NodeClock) async -> String?? {
        await withTaskGroup(of: String??.self) { group in
            group.addTask { (try? await duplex.nextInput()).map { Optional($0) } ?? .some(nil) }
            group.addTask { try? await clock.sleep(for: within); return nil }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    /// The one program the entry starts, checked beyond upstream's inventory rules: not a shell or
    /// interpreter, and replaceable by no one but root or the node's account.
    static func executable(of entry: DesktopEntry, searchPath: String? = nil) throws(NodeError) -> String {
        let real = entry.executable
        guard !CodeRunners.isRunner(name: PathName.lastComponent(real)), !CodeRunners.isRunner(name: baseName(real)) else {
            throw failed("\(entry.label) runs \(real), a shell or interpreter; only desktop entries that start one native program can be launched")
        }
        // By what it is, not what it is called: a renamed or copied shell is still one.
        if let runner = CodeRunners.sameProgram(as: real, searchPath: searchPath) {
            throw failed("\(entry.label) runs \(real), which is \(runner) under another name (a shell, interpreter or program runner); only desktop entries that start one native program can be launched")
        }
        if let why = FileTrust.problem(real) { throw failed("\(entry.label): refused \(real): \(why)") }
        return real
    }

    /// "python3.11" → "python", "ld-linux-x86-64.so.2" → "ld-linux-x86-64.so".
    static func baseName(_ path: String) -> String {
        var name = PathName.lastComponent(path)
        while let last = name.last, last.isNumber || last == "." { name.removeLast() }
        return name
    }
}
