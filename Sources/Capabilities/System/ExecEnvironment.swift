/// The environment a command runs with (docs/PROTOCOL.md §6.4, "Environment"): the daemon's own,
/// minus what lets a variable take over the program (loader and interpreter hooks: upstream's
/// host-env blocklist, kept as the floor) and what is the node's own (its gateway token, systemd's
/// notify socket), plus the request's overrides, which must be on an allowlist (`requestKeys`).
enum ExecEnvironment {
    /// Never inherited, never accepted from a request.
    static let blockedKeys: Set<String> = [
        "BASH_ENV", "ENV", "GCONV_PATH", "GLIBC_TUNABLES", "IFS", "JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS",
        "JAVA_OPTS", "NODE_OPTIONS", "NODE_PATH", "PERL5LIB", "PERL5OPT", "PYTHONHOME", "PYTHONPATH", "PYTHONBREAKPOINT",
        "RUBYLIB", "RUBYOPT", "SSLKEYLOGFILE", "BROWSER", "GIT_EDITOR", "GIT_EXTERNAL_DIFF", "GIT_DIR", "GIT_WORK_TREE",
        "GIT_COMMON_DIR", "GIT_EXEC_PATH", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES",
        "GIT_NAMESPACE", "GIT_SEQUENCE_EDITOR", "GIT_TEMPLATE_DIR", "GIT_SSL_NO_VERIFY", "GIT_SSL_CAINFO", "GIT_SSL_CAPATH",
        "KUBECONFIG", "GOOGLE_APPLICATION_CREDENTIALS", "AWS_SHARED_CREDENTIALS_FILE", "AWS_WEB_IDENTITY_TOKEN_FILE",
        "AZURE_AUTH_LOCATION", "CC", "CXX", "CARGO_BUILD_RUSTC", "CARGO_BUILD_RUSTC_WRAPPER", "RUSTC_WRAPPER", "CARGO_HOME",
        "CMAKE_C_COMPILER", "CMAKE_CXX_COMPILER", "HELM_HOME", "DOCKER_HOST", "SHELL", "SHELLOPTS", "PS4",
        "DOTNET_STARTUP_HOOKS", "DOTNET_ADDITIONAL_DEPS", "MAVEN_OPTS", "MAKEFLAGS", "MFLAGS", "SBT_OPTS", "GRADLE_OPTS",
        "ANT_OPTS", "HGRCPATH",
        // The daemon's own: its service manager's sockets must not be reachable from commands.
        "NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID",
    ]
    /// Prefixes never inherited or accepted (OPENCLAW_ holds the gateway token and password).
    static let blockedPrefixes = ["BASH_FUNC_", "DYLD_", "LD_", "OPENCLAW_"]
    /// What a request may set (docs/SECURITY.md, "The environment of a command"): terminal and
    /// locale settings only, plus what the operator lists in `capabilities.system.envAllow`.
    /// Everything else is refused by name: keys that turn an allowed program into another one
    /// (`GIT_ALLOW_PROTOCOL`, `GIT_CONFIG_*`, `PERL5DB`, `PYTHONSTARTUP`, `LOCPATH`, `PAGER`, …)
    /// keep appearing, so no blocklist can keep up with them.
    static let requestKeys: Set<String> = [
        "TERM", "COLORTERM", "NO_COLOR", "FORCE_COLOR", "CLICOLOR", "CLICOLOR_FORCE", "COLUMNS", "LINES",
        "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_NUMERIC", "LC_TIME", "LC_COLLATE", "LC_MONETARY", "LC_MESSAGES",
        "LC_PAPER", "LC_NAME", "LC_ADDRESS", "LC_TELEPHONE", "LC_MEASUREMENT", "LC_IDENTIFICATION", "TZ",
    ]
    /// Used when PATH is missing from the daemon's environment (and by system.which).
    static let defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

    static func isBlocked(_ key: String) -> Bool {
        blockedKeys.contains(key) || blockedPrefixes.contains { key.hasPrefix($0) }
    }

    static func isPortable(_ key: String) -> Bool {
        guard let first = key.unicodeScalars.first, first == "_" || (first.isASCII && first.properties.isAlphabetic) else { return false }
        return key.unicodeScalars.allSatisfy { $0 == "_" || ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0))) }
    }

    /// The daemon's environment without what commands must not inherit; PATH always set.
    static func inherited(_ env: [String: String]) -> [String: String] {
        var out = env.filter { !isBlocked($0.key) }
        if (out["PATH"] ?? "").isEmpty { out["PATH"] = defaultPath }
        return out
    }

    /// The environment for one run, or the upstream denial message naming the rejected keys.
    /// PATH overrides are ignored (a request cannot redirect which binary a name resolves to).
    /// `allowed` adds the operator's `envAllow` keys to `requestKeys`; values of the locale and
    /// time-zone keys must be names, not paths (glibc loads locale data from a path).
    static func build(base: [String: String], overrides: [String: String]?, allowed extra: Set<String> = []) -> Result<[String: String], RejectedOverrides> {
        var env = inherited(base)
        var blocked: [String] = [], invalid: [String] = [], badValues: [String] = []
        for (key, value) in (overrides ?? [:]).sorted(by: { $0.key < $1.key }) {
            if key == "PATH" { continue }
            if !isPortable(key) { invalid.append(key); continue }
            guard !isBlocked(key), requestKeys.contains(key) || extra.contains(key) else { blocked.append(key); continue }
            guard valueIsSafe(key, value) else { badValues.append(key); continue }
            env[key] = value
        }
        if !blocked.isEmpty || !invalid.isEmpty || !badValues.isEmpty {
            return .failure(RejectedOverrides(blocked: blocked, invalid: invalid, badValues: badValues))
        }
        return .success(env)
    }

    /// No control characters anywhere; locale and TZ values are plain names.
    static func valueIsSafe(_ key: String, _ value: String) -> Bool {
        guard value.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7f }) else { return false }
        if key == "LANG" || key == "LANGUAGE" || key.hasPrefix("LC_") {
            // LANGUAGE is a colon-separated list of names.
            return value.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || "0123456789_.@-:".unicodeScalars.contains($0)) }
        }
        if key == "TZ" { return !value.contains("..") && !value.hasPrefix("/") && !value.hasPrefix(":/") }
        return true
    }

    struct RejectedOverrides: Error {
        let blocked: [String]
        let invalid: [String]
        var badValues: [String] = []
        var message: String {
            var parts: [String] = []
            if !blocked.isEmpty { parts.append("blocked override keys: \(blocked.joined(separator: ", "))") }
            if !invalid.isEmpty { parts.append("invalid non-portable override keys: \(invalid.joined(separator: ", "))") }
            if !badValues.isEmpty { parts.append("unsafe override values: \(badValues.joined(separator: ", "))") }
            return "SYSTEM_RUN_DENIED: environment override rejected (\(parts.joined(separator: "; ")))"
        }
    }
}
