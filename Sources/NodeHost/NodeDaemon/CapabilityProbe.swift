import Kit
import Registry
import Support

extension NodeRuntime {
    /// Probes again the enabled capabilities that could not serve (all of them, or those in
    /// `only`) and puts the new answers in force: a desktop session that started after the node,
    /// a camera plugged in later. One that can serve now is started as at start-up and listed in
    /// the outcome's `started`, so the daemon tells it of presence and the gateway and announces
    /// the new commands; one that still cannot keeps its refusal, with the reason found now.
    /// The daemon calls this in order with config reloads (RegistryChanges), never beside one.
    public func probeAgain(_ only: [String]? = nil) async -> ReloadOutcome {
        let before = registry
        var after = before
        var out = ReloadOutcome()
        for name in before.probeable where only.map({ $0.contains(name) }) ?? true {
            guard let cap = before.entry(forCapability: name)?.capability else { continue }
            var found = await cap.availability()
            if found == .available, let lifecycle = cap.lifecycle { found = await lifecycle.start() }
            after = after.with(availability: found, for: name)
            if found == .available { out.started.append(name) }
        }
        dispatcher.install(after)
        out.manifestChanged = before.manifest != after.manifest
        return out
    }
}

/// One change of the command table at a time — a config reload, a probe — in the order asked:
/// both read the table in force and install a new one, and two at once would lose one's result.
actor RegistryChanges {
    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func run<T: Sendable>(_ body: @Sendable () async -> T) async -> T {
        if busy { await withCheckedContinuation { waiting.append($0) } } else { busy = true }
        let result = await body()
        // The turn passes to the next in line (still busy), or the gate opens.
        if waiting.isEmpty { busy = false } else { waiting.removeFirst().resume() }
        return result
    }
}
