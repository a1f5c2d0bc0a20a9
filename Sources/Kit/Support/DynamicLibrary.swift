import Glibc

/// A system library opened with dlopen on first use instead of linked: a library that only one
/// feature needs (ALSA for audio, libswscale for scaling) then costs nothing until that feature
/// runs, and a library that is not installed disables only that feature, with a message saying
/// which package to install. Opened once and never closed, unless made with `closeWhenReleased`
/// (then the last reference going away dlcloses it: see IdleReleased).
public final class DynamicLibrary: @unchecked Sendable {  // a dlopen handle: immutable, and dlsym is thread-safe
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public let description: String
        public init(description: String) { self.description = description }
    }

    public let soname: String
    private let handle: UnsafeMutableRawPointer
    private let package: String
    private let closeWhenReleased: Bool

    /// `soname` as the dynamic linker would find it (the versioned name, e.g. "libasound.so.2");
    /// `package` is the Debian 12 package that ships it, for the error message (named as this
    /// release names it: DebianPackageName). With `closeWhenReleased`, deinit dlcloses the handle:
    /// every function taken from it must be unreachable by then, so whoever holds those functions
    /// holds this object too.
    public init(_ soname: String, package debian12Package: String, closeWhenReleased: Bool = false) throws(Failure) {
        let package = DebianPackageName.onThisRelease(debian12Package)
        guard let h = dlopen(soname, RTLD_NOW | RTLD_LOCAL) else {
            let why = dlerror().map { String(cString: $0) } ?? "not found"
            throw Failure(description: "cannot load \(soname) (\(why)); install it with: apt install \(package)")
        }
        self.soname = soname
        self.package = package
        self.closeWhenReleased = closeWhenReleased
        handle = h
    }

    deinit { if closeWhenReleased { dlclose(handle) } }

    /// The function `name`, as the C function type `F` (an `@convention(c)` function type that
    /// matches the C prototype exactly; a mismatch is undefined behaviour, as in C).
    public func function<F>(_ name: String, as type: F.Type = F.self) throws(Failure) -> F {
        precondition(MemoryLayout<F>.size == MemoryLayout<UnsafeRawPointer>.size, "\(F.self) is not a C function type")
        guard let p = dlsym(handle, name) else {
            throw Failure(description: "\(soname) has no \(name) (too old? install a current \(package))")
        }
        return unsafeBitCast(p, to: F.self)
    }

    /// The address of `name`, for C shims that take the function as a pointer.
    public func address(_ name: String) throws(Failure) -> UnsafeMutableRawPointer {
        guard let p = dlsym(handle, name) else {
            throw Failure(description: "\(soname) has no \(name) (too old? install a current \(package))")
        }
        return p
    }
}
