/// The environment a command runs with (docs/PROTOCOL.md §6.4, "Environment"): the daemon's own,
/// minus what lets a variable take over the program (loader and interpreter hooks) and what is the
/// node's own (its gateway token, systemd's notify socket), plus the request's overrides, minus
/// those that would do the same. The lists follow the upstream node host's host-env security policy.
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
    /// Inherited as they are, but a request may not set them.
    static let blockedOverrideKeys: Set<String> = [
        "HOME", "GRADLE_USER_HOME", "ZDOTDIR", "GIT_SSH_COMMAND", "GIT_SSH", "GIT_PROXY_COMMAND", "GIT_ASKPASS", "SSH_ASKPASS",
        "LESSOPEN", "LESSCLOSE", "PAGER", "MANPAGER", "GIT_PAGER", "EDITOR", "VISUAL", "FCEDIT", "SUDO_EDITOR",
        "PROMPT_COMMAND", "HISTFILE", "PERL5DB", "PERL5DBCMD", "OPENSSL_CONF", "OPENSSL_ENGINES", "PYTHONSTARTUP", "WGETRC",
        "CURL_HOME", "CLASSPATH", "CGO_CFLAGS", "CGO_LDFLAGS", "GOFLAGS", "CORECLR_PROFILER_PATH", "PHPRC",
        "PHP_INI_SCAN_DIR", "DENO_DIR", "BUN_CONFIG_REGISTRY", "YARN_RC_FILENAME", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY",
        "NO_PROXY", "NODE_TLS_REJECT_UNAUTHORIZED", "NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "SSL_CERT_DIR",
        "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "DOCKER_TLS_VERIFY", "DOCKER_CERT_PATH", "DOCKER_CONTEXT", "PIP_INDEX_URL",
        "PIP_PYPI_URL", "PIP_EXTRA_INDEX_URL", "PIP_CONFIG_FILE", "PIP_FIND_LINKS", "PIP_TRUSTED_HOST", "UV_INDEX",
        "UV_INDEX_URL", "UV_PYTHON", "UV_EXTRA_INDEX_URL", "UV_DEFAULT_INDEX", "LIBRARY_PATH", "CPATH", "C_INCLUDE_PATH",
        "CPLUS_INCLUDE_PATH", "OBJC_INCLUDE_PATH", "GOPROXY", "GONOSUMCHECK", "GONOSUMDB", "GONOPROXY", "GOPRIVATE", "GOENV",
        "GOPATH", "PYTHONUSERBASE", "RUSTFLAGS", "VIRTUAL_ENV", "LUA_PATH", "LUA_CPATH", "GEM_HOME", "GEM_PATH",
        "BUNDLE_GEMFILE", "COMPOSER_HOME", "XDG_CONFIG_HOME", "AWS_CONFIG_FILE",
    ]
    static let blockedOverridePrefixes = ["GIT_CONFIG_", "NPM_CONFIG_", "CARGO_REGISTRIES_"]
    /// What a shell wrapper (`sh -lc …`) keeps of the request's overrides.
    static let shellWrapperKeys: Set<String> = ["TERM", "LANG", "COLORTERM", "NO_COLOR", "FORCE_COLOR"]
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
    static func build(base: [String: String], overrides: [String: String]?, shellWrapper: Bool) -> Result<[String: String], RejectedOverrides> {
        var env = inherited(base)
        var blocked: [String] = [], invalid: [String] = []
        for (key, value) in (overrides ?? [:]).sorted(by: { $0.key < $1.key }) {
            if key == "PATH" { continue }
            if !isPortable(key) { invalid.append(key); continue }
            if isBlocked(key) || blockedOverrideKeys.contains(key) || blockedOverridePrefixes.contains(where: { key.hasPrefix($0) }) {
                blocked.append(key); continue
            }
            if shellWrapper && !(shellWrapperKeys.contains(key) || key.hasPrefix("LC_")) { continue }
            env[key] = value
        }
        if !blocked.isEmpty || !invalid.isEmpty { return .failure(RejectedOverrides(blocked: blocked, invalid: invalid)) }
        return .success(env)
    }

    struct RejectedOverrides: Error {
        let blocked: [String]
        let invalid: [String]
        var message: String {
            var parts: [String] = []
            if !blocked.isEmpty { parts.append("blocked override keys: \(blocked.joined(separator: ", "))") }
            if !invalid.isEmpty { parts.append("invalid non-portable override keys: \(invalid.joined(separator: ", "))") }
            return "SYSTEM_RUN_DENIED: environment override rejected (\(parts.joined(separator: "; ")))"
        }
    }
}
