import Config
import Kit
import Support
import Synchronization

/// The code half of the manifest's three rows. Everything else — the gate on hello.count, the
/// config keys and their defaults, the docs — is in libopenclaw-hello.manifest.json5.
struct HelloCapability: Capability, SelfDiagnosing {
    let manifest: BundleManifest
    let greeting: String
    let times: Int
    let presence: any PresenceSource
    let clock: any NodeClock
    let loadedAt: ContinuousClock.Instant
    private let counter = Counter()

    init(context: CapabilityContext) {
        manifest = context.manifest
        presence = context.presence
        clock = context.clock
        loadedAt = context.clock.now
        // The section arrives validated with the manifest's defaults filled in.
        greeting = context.section.string("greeting") ?? ""
        times = context.section.int("times") ?? 1
    }

    /// hello.greet's params, as its manifest row describes them (absent: the row's default).
    struct GreetParams: CommandParams {
        var name: String
        /// An empty name greets the world too.
        var greeted: String { name.isEmpty ? "world" : name }
    }

    /// hello.greet's result.
    struct GreetResult: Encodable, Sendable { let text: String; let presence: String }
    /// hello.count's result.
    struct CountResult: Encodable, Sendable { let count: Int; let sinceLoadMs: Int64 }

    var handlers: [CommandHandler] {
        // hello.greet runs whoever is there and says whether someone is (the presence gate the
        // node hands every bundle); hello.count is gated in the manifest, so it never runs unattended.
        [CommandHandler("hello.greet", params: GreetParams.self) { [greeting, times, presence] p, _ in
             GreetResult(text: Array(repeating: "\(greeting), \(p.greeted)!", count: times).joined(separator: " "),
                         presence: await presence.sample().presence.rawValue)
         },
         CommandHandler("hello.count", params: NoParams.self) { [counter, clock, loadedAt] _, _ in
             CountResult(count: counter.next(), sinceLoadMs: (clock.now - loadedAt).milliseconds)
         },
         CommandHandler("hello.stream", params: HelloStream.Params.self, handler: HelloStream.run)]
    }

    func availability() async -> Availability { .available }

    func diagnose() async -> [Diagnosis] {
        greeting.trimmed().isEmpty ? [Diagnosis(.warn, "capabilities.hello.greeting is empty: hello.greet greets with nothing")]
                                   : [Diagnosis(.ok, "greets with \"\(greeting)\"")]
    }
}

/// Invocations so far: the value and its lock are one thing.
final class Counter: Sendable {
    private let value = Mutex(0)
    func next() -> Int { value.withLock { $0 += 1; return $0 } }
}
