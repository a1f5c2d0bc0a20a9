import Glibc

/// This machine's host name, as gethostname(2) gives it.
public enum HostName {
    public static var current: String {
        var buf = [CChar](repeating: 0, count: 256)
        gethostname(&buf, buf.count - 1)
        return String(cBuffer: buf)
    }
}
