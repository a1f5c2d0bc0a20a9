import Glibc
import Support

/// The seccomp program bwrap installs (`--seccomp FD`) when `sandboxNetwork` is false (system.run's
/// sandbox and an MCP server's): `socket(2)`
/// with `AF_UNIX` fails with EACCES, io_uring with ENOSYS, everything else is allowed. A network namespace already cuts
/// TCP/UDP and abstract Unix sockets; this closes the Unix sockets on the file system that a
/// read-only bind of `/` would otherwise leave reachable (a session bus, an agent socket in the home).
/// 32-bit compat calls on 64-bit kernels get no sockets at all (socketcall's arguments cannot be
/// inspected), and the x32 ABI none either.
public enum UnixSocketFilter {
    // struct seccomp_data: nr at 0, arch at 4, args[0] at 16 (low 32 bits first on these little-endian CPUs).
    private static let offNr: UInt32 = 0, offArch: UInt32 = 4, offArg0: UInt32 = 16
    private static let allow: UInt32 = 0x7fff_0000                    // SECCOMP_RET_ALLOW
    private static let denyEACCES: UInt32 = 0x0005_0000 | UInt32(EACCES) // SECCOMP_RET_ERRNO

    struct Arch {
        let audit: UInt32
        let socket: UInt32
        /// Syscall numbers at or above this are another ABI (x32): refused.
        let abiBit: UInt32?
        /// The compat (32-bit) arch and its socket calls, all refused.
        let compat: (audit: UInt32, calls: [UInt32])?
    }

    /// io_uring_setup, io_uring_enter, io_uring_register: the same numbers on every architecture
    /// since Linux 5.1 (and on i386 and arm compat). io_uring makes sockets (IORING_OP_SOCKET) and
    /// connects them without socket(2) or connect(2) ever being called, so this filter's rule
    /// would not see them: the whole interface is refused, as Docker's default profile does. ENOSYS,
    /// so programs that use it when it is there (liburing users, some runtimes) fall back to epoll.
    static let ioUring: [UInt32] = [425, 426, 427]
    private static let denyENOSYS: UInt32 = 0x0005_0000 | UInt32(ENOSYS)

    static var native: Arch? {
        #if arch(x86_64)
        return Arch(audit: 0xC000_003E, socket: 41, abiBit: 0x4000_0000, compat: (0x4000_0003, [102, 359]))  // i386 socketcall, socket
        #elseif arch(arm64)
        return Arch(audit: 0xC000_00B7, socket: 198, abiBit: nil, compat: (0x4000_0028, [281]))  // arm EABI socket
        #else
        return nil
        #endif
    }

    /// One BPF instruction with symbolic jump targets, resolved when the program is assembled.
    private enum Label { case next, allow, deny, noSys, compat }
    private struct Op { let code: UInt16; var jt: Label = .next; var jf: Label = .next; let k: UInt32 }

    /// The program as bytes of `struct sock_filter` (u16 code, u8 jt, u8 jf, u32 k), nil on an
    /// architecture this does not know (the sandbox then refuses to run with network off).
    static func program() -> [UInt8]? {
        guard let a = native else { return nil }
        // BPF opcodes: ld w abs, jeq k, jge k, ret k.
        let ldAbs: UInt16 = 0x20, jeq: UInt16 = 0x15, jge: UInt16 = 0x35, ret: UInt16 = 0x06
        // The native ABI: another ABI's numbers (x32) refused, io_uring refused, socket(AF_UNIX) refused.
        var ops: [Op] = [Op(code: ldAbs, k: offArch), Op(code: jeq, jf: .compat, k: a.audit), Op(code: ldAbs, k: offNr)]
        if let bit = a.abiBit { ops.append(Op(code: jge, jt: .deny, k: bit)) }
        for n in ioUring { ops.append(Op(code: jeq, jt: .noSys, k: n)) }
        ops.append(Op(code: jeq, jf: .allow, k: a.socket))
        ops.append(Op(code: ldAbs, k: offArg0))
        ops.append(Op(code: jeq, jt: .deny, jf: .allow, k: UInt32(AF_UNIX)))
        // The compat ABI (32-bit programs): no sockets at all (socketcall's arguments cannot be
        // inspected), no io_uring. An unknown arch is left to the kernel's own checks.
        let compatAt = ops.count
        if let c = a.compat {
            ops.append(Op(code: ldAbs, k: offArch))
            ops.append(Op(code: jeq, jf: .allow, k: c.audit))
            ops.append(Op(code: ldAbs, k: offNr))
            for n in ioUring { ops.append(Op(code: jeq, jt: .noSys, k: n)) }
            for n in c.calls { ops.append(Op(code: jeq, jt: .deny, k: n)) }
        }
        let allowAt = ops.count
        ops.append(Op(code: ret, k: allow))
        ops.append(Op(code: ret, k: denyEACCES))
        ops.append(Op(code: ret, k: denyENOSYS))
        func target(_ l: Label, from at: Int) -> UInt8 {
            let to: Int
            switch l {
            case .next: return 0
            case .allow: to = allowAt
            case .deny: to = allowAt + 1
            case .noSys: to = allowAt + 2
            case .compat: to = a.compat == nil ? allowAt : compatAt
            }
            return UInt8(to - at - 1)
        }
        var bytes: [UInt8] = []
        for (at, op) in ops.enumerated() {
            let jt = target(op.jt, from: at), jf = target(op.jf, from: at), k = op.k
            bytes += [UInt8(op.code & 0xff), UInt8(op.code >> 8), jt, jf]
            bytes += [UInt8(k & 0xff), UInt8((k >> 8) & 0xff), UInt8((k >> 16) & 0xff), UInt8(k >> 24)]
        }
        return bytes
    }

    /// Built once: the same for every run.
    private static let compiled = program()

    /// A pipe's read end holding the program, for bwrap's `--seccomp`; nil when it cannot be made.
    public static func descriptor() -> Int32? {
        guard let bytes = compiled, let pipe = Subprocess.makePipe() else { return nil }
        let written = bytes.withUnsafeBytes { write(pipe.write, $0.baseAddress, $0.count) }
        close(pipe.write)
        guard written == bytes.count else { close(pipe.read); return nil }
        return pipe.read
    }
}
