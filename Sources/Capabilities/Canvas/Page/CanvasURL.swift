import Config
import Glibc
import Kit
import Support

/// Turns a `canvas.navigate`/`canvas.present` url into what the browser loads.
/// - `""`, `"/"` → the built-in scaffold;
/// - absolute http(s)/data/about URLs → as given (not file:, which would let an agent read the
///   node's own files — config with the gateway token, keys — back through canvas.eval);
/// - the gateway's `canvasHostUrl`/`pluginSurfaceUrls` are used only when http or https, and the
///   resolved URL is checked again (docs/SECURITY.md);
/// - `/__openclaw__/…` or any other `/path` → on the canvas host (after its capability prefix,
///   keeping its `oc_cap` query), e.g. `http://gw:18789/__openclaw__/cap/TOKEN/__openclaw__/canvas/x.html`;
/// - a bare relative path (`report/index.html`) → a canvas document: `<host>/__openclaw__/canvas/<path>`.
enum CanvasURL {
    enum Target: Equatable {
        case scaffold
        case url(String)
    }

    static let allowedSchemes: Set<String> = ["http", "https", "data", "about"]

    static func resolve(_ raw: String, canvasHost: String?) throws(NodeError) -> Target {
        let s = raw.trimmed()
        if s.isEmpty || s == "/" { return .scaffold }
        if let scheme = scheme(of: s) {
            guard allowedSchemes.contains(scheme) else {
                throw NodeError.invalidRequest("url scheme \"\(scheme):\" is not allowed for the canvas (use http, https or data)")
            }
            return .url(s)
        }
        guard let host = canvasHost, let hostScheme = scheme(of: host) else {
            throw NodeError.invalidRequest("\"\(s)\" is relative to the canvas host, but the gateway advertised none " +
                                           "(connect the node to a gateway, or pass an absolute URL)")
        }
        // The gateway names the host; only a web origin may be one (a file:/// "host" would make
        // every relative target a local file, readable back through canvas.eval).
        guard hostScheme == "http" || hostScheme == "https", var base = URLParts(string: host) else {
            throw NodeError.invalidRequest("the gateway's canvas host \"\(host)\" is not an http or https URL; refusing to resolve \"\(s)\" against it")
        }
        let path = s.hasPrefix("/") ? s : "/__openclaw__/canvas/" + s
        // The request's own path, query and fragment, then the host's (capability token) query.
        guard let own = URLParts(string: "http://x" + path) else {
            throw NodeError.invalidRequest("cannot build a URL from \"\(s)\" (escape spaces and other characters a URL cannot hold)")
        }
        let prefix = base.path.hasSuffix("/") ? String(base.path.dropLast()) : base.path
        base.path = prefix + own.path
        let queries = [own.query, base.query].compactMap { $0 }.filter { !$0.isEmpty }
        base.query = queries.isEmpty ? nil : queries.joined(separator: "&")
        base.fragment = own.fragment
        let url = base.string
        // Checked again on what the browser will load, whatever the pieces were.
        guard let final = scheme(of: url), final == "http" || final == "https" else {
            throw NodeError.invalidRequest("\"\(s)\" resolves to \"\(url)\", which is not an http or https URL")
        }
        return .url(url)
    }

    /// Whether `raw` is resolved against the canvas host (a path, not an absolute URL or "").
    static func isOnCanvasHost(_ raw: String) -> Bool {
        let s = raw.trimmed()
        return !(s.isEmpty || s == "/") && scheme(of: s) == nil
    }

    /// The A2UI renderer page on the canvas host.
    static func a2uiPage(canvasHost: String) throws(NodeError) -> String {
        guard case .url(let u) = try resolve("/__openclaw__/a2ui/?platform=linux", canvasHost: canvasHost) else {
            throw NodeError.invalidRequest("no A2UI page")
        }
        return u
    }

    private static func scheme(of s: String) -> String? { URLParts.scheme(of: s) }
}
