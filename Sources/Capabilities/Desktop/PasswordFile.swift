import Glibc
import Support

/// `capabilities.desktop.passwordFile` (server: external): the VNC server's password, read at each
/// stream so a changed password needs no restart. Upstream's rules and wording: a regular file of at
/// most 4 KiB, trailing CR/LF ignored, not empty; beyond upstream, other accounts must not be able
/// to read it (the password opens the desktop).
enum PasswordFile {
    static let maxBytes = 4096

    static func read(_ path: String) throws(DesktopStreamError) -> String {
        var st = stat()
        guard stat(path, &st) == 0 else {
            throw .configuration("desktop password file \(path) cannot be read: \(String(cString: strerror(errno)))")
        }
        guard (st.st_mode & S_IFMT) == S_IFREG else { throw .configuration("desktop password file must be a regular file (\(path))") }
        guard st.st_size <= maxBytes else { throw .configuration("desktop password file is too large (\(path): more than 4 KiB)") }
        guard st.st_mode & 0o004 == 0 else {
            throw .configuration("desktop password file \(path) is readable by every account: chmod 600 it (the password opens the desktop)")
        }
        // A group with anyone besides the owner in it can read it too (its owner's private group cannot).
        guard st.st_mode & 0o040 == 0 || PrivateGroup.isPrivate(gid: st.st_gid, to: st.st_uid) else {
            throw .configuration("desktop password file \(path) is readable by its group (gid \(st.st_gid)), which has other members: chmod 600 it (the password opens the desktop)")
        }
        guard var bytes = FileSystem.readBytes(path) else { throw .configuration("desktop password file \(path) cannot be read") }
        while let last = bytes.last, last == 0x0A || last == 0x0D { bytes.removeLast() }
        guard !bytes.isEmpty else { throw .configuration("desktop password file is empty (\(path))") }
        return String(decoding: bytes, as: UTF8.self)
    }
}
