import Support

/// The node's decision for one run, in upstream's order (docs/PROTOCOL.md §6.4): security=deny,
/// then the local STOP-list, then ask, then the allowlist, then allow.
enum ExecPolicy {
    struct Denial: Equatable {
        /// The message the invoke fails with (code UNAVAILABLE), verbatim as upstream words it.
        let message: String
        /// The `reason` of the exec.denied event.
        let reason: String
    }

    struct Input {
        var security: ExecSecurity
        var ask: ExecAsk
        var analysisOk: Bool
        var allowlistSatisfied: Bool
        var durableApproval: Bool
        var denylisted: Bool
        var approvedByAsk: Bool
        /// The approval was made at the device (`openclaw-node approvals approve`), not relayed.
        var approvedAtDevice = false
    }

    static func requiresAsk(_ i: Input) -> Bool {
        i.ask == .always || (i.ask == .onMiss && i.security == .allowlist && (!i.analysisOk || !i.allowlistSatisfied) && !i.durableApproval)
    }

    /// nil = allowed.
    static func evaluate(_ i: Input) -> Denial? {
        if i.security == .deny { return Denial(message: "SYSTEM_RUN_DISABLED: security=deny", reason: "security=deny") }
        // A STOP-list hit needs a fresh approval made at the device: neither allow-always entries nor
        // an approval the gateway relays clear it (a gateway can prepare a plan and approve it itself).
        if i.denylisted && !i.approvedAtDevice {
            return Denial(message: "SYSTEM_RUN_DENIED: denylist match; approval required at the device", reason: "denylist-hit")
        }
        if requiresAsk(i) && !i.approvedByAsk { return Denial(message: "SYSTEM_RUN_DENIED: approval required", reason: "approval-required") }
        if i.security == .allowlist && (!i.analysisOk || !i.allowlistSatisfied) && !i.approvedByAsk && !i.durableApproval {
            return Denial(message: "SYSTEM_RUN_DENIED: allowlist miss", reason: "allowlist-miss")
        }
        return nil
    }
}
