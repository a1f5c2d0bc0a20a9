import Support

/// The desktop portal's answer to "may the node share the screen", kept between sessions: the
/// restore token its last screen cast returned, in `<stateDir>/screen/portal-restore-token`
/// (0600 in a 0700 directory: any program of this user on the host that presented it would be
/// let in without a dialog). Without it, each new cast asks the person at the desktop.
struct PortalApproval: Sendable {
    /// The bundle's state directory; nil when the node has none (nothing is kept, each cast asks).
    let directory: String?

    var path: String? { directory.map { $0 + "/portal-restore-token" } }

    /// The kept token, when it looks like one (the portal refuses anything but a UUID).
    var token: String? {
        guard let path, let text = FileSystem.readText(path)?.split(whereSeparator: \.isWhitespace).first.map(String.init),
              text.count == 36, text.allSatisfy({ $0.isHexDigit || $0 == "-" }) else { return nil }
        return text
    }

    /// Keeps `token` (the portal may hand a new one out with each session); nil on success, else why not.
    func keep(_ token: String?) -> String? {
        guard let directory, let path, let token, token != self.token else { return nil }
        if let why = PrivateDirectory.create(directory) { return why }
        do throws(FileSystem.Failure) { try FileSystem.write(Array((token + "\n").utf8), to: path, mode: 0o600) } catch {
            return "cannot keep the portal's approval in \(path): \(error)"
        }
        return nil
    }

    /// Forgets the token (the portal no longer knows it, or refused it).
    func forget() {
        guard let path else { return }
        try? FileSystem.remove(path)
    }
}
