import Glibc
import Support

/// The bearer token of `mcp serve --http`: 32 random bytes as hex in the bundle's state directory
/// (`<stateDir>/mcp/serve-token`, 0600 in a 0700 directory), made on first use and kept, so the
/// `mcpServers` entry `mcp config --http` prints stays valid. Delete the file to change it.
enum ServeToken {
    static func path(stateDirectory: String) -> String { PathName.join(stateDirectory, "serve-token") }

    /// The token, made when there is none; or what went wrong.
    static func load(stateDirectory: String) -> Result<String, ServeFailure> {
        let file = path(stateDirectory: stateDirectory)
        if let text = FileSystem.readText(file) {
            let token = text.trimmed()
            if token.count >= 32 { return .success(token) }
        }
        if let why = PrivateDirectory.create(stateDirectory) { return .failure(ServeFailure(why)) }
        let token = SecureRandom.bytes(32).map { $0.hex() }.joined()
        do throws(FileSystem.Failure) { try FileSystem.write(Array(token.utf8), to: file, mode: 0o600) }
        catch { return .failure(ServeFailure("cannot write \(file): \(error)")) }
        return .success(token)
    }

    /// Compares without an early exit, so the time taken says nothing about how much matched.
    static func matches(_ presented: String, _ token: String) -> Bool {
        let a = Array(presented.utf8), b = Array(token.utf8)
        var diff = UInt8(a.count == b.count ? 0 : 1)
        for i in 0..<min(a.count, b.count) { diff |= a[i] ^ b[i] }
        return diff == 0
    }
}
