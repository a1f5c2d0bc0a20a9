import CProcessControl
import Glibc

/// An anonymous file in memory (memfd), mapped into this process. Its descriptor can be handed to
/// a child process, which maps the same pages: a frame written here is read there without
/// passing through a pipe. Owns the descriptor and the mapping.
public final class SharedMemoryFile {
    /// Owned: closed once, after the mapping is gone.
    private let descriptor: FileDescriptor
    /// The number, to hand to a child or map (valid while this file lives).
    public var fd: Int32 { descriptor.rawValue }
    /// The mapping (nil before the first `reserve`/`map`) and its length.
    public private(set) var base: UnsafeMutableRawPointer?
    private(set) var mappedBytes = 0

    /// A new, empty file; nil when the kernel refuses one.
    public init?(name: String) {
        let fd = ocn_memfd_create(name)
        guard fd >= 0 else { return nil }
        descriptor = FileDescriptor(owning: fd)
    }

    /// A file another process made (an inherited descriptor).
    public init(adopting fd: Int32) { descriptor = FileDescriptor(owning: fd) }

    deinit {
        if let base { munmap(base, mappedBytes) }
    }

    /// Grows the file to at least `bytes` and maps all of it (the creator's side).
    public func reserve(_ bytes: Int) -> Bool {
        guard bytes > mappedBytes else { return true }
        guard ftruncate(fd, off_t(bytes)) == 0 else { return false }
        return map(bytes)
    }

    /// Maps at least `bytes` of the file as it is now (the other side); false when it is shorter.
    public func map(_ bytes: Int) -> Bool {
        guard bytes > mappedBytes else { return true }
        var st = stat()
        guard fstat(fd, &st) == 0, Int(st.st_size) >= bytes else { return false }
        let length = Int(st.st_size)
        guard let p = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), p != MAP_FAILED else { return false }
        if let base { munmap(base, mappedBytes) }
        base = p
        mappedBytes = length
        return true
    }
}
