import Glibc
import Support

/// The seccomp program bwrap installs (`--seccomp FD`) when `sandboxNetwork` is false: `socket(2)`
/// with `AF_UNIX` fails with EACCES, everything else is allowed. A network namespace already cuts
/// TCP/UDP and abstract Unix sockets; this closes the Unix sockets on the file system that a
/// read-only bind of `/` would otherwise leave reachable (a session bus, an agent socket in the home).
/// 32-bit compat calls on 64-bit kernels get no sockets at all (socketcall's arguments cannot be
/// inspected), and the x32 ABI none either.
enum UnixSocketFilter {
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

    static var native: Arch? {
        #if arch(x86_64)
        return Arch(audit: 0xC000_003E, socket: 41, abiBit: 0x4000_0000, compat: (0x4000_0003, [102, 359]))  // i386 socketcall, socket
        #elseif arch(arm64)
        return Arch(audit: 0xC000_00B7, socket: 198, abiBit: nil, compat: (0x4000_0028, [281]))  // arm EABI socket
        #else
        return nil
        #endif
    }

    /// The program as bytes of `struct sock_filter` (u16 code, u8 jt, u8 jf, u32 k), nil on an
    /// architecture this does not know (the sandbox then refuses to run with network off).
    static func program() -> [UInt8]? {
        guard let a = native else { return nil }
        // BPF opcodes: ld w abs, jeq k, jge k, ret k.
        let ldAbs: UInt16 = 0x20, jeq: UInt16 = 0x15, jge: UInt16 = 0x35, ret: UInt16 = 0x06
        var p: [(UInt16, UInt8, UInt8, UInt32)] = []
        let compatCalls = a.compat?.calls ?? []
        // Layout: [0] ld arch; [1] jeq native → 2 else compat block; native block; compat block; ALLOW; DENY.
        var native: [(UInt16, UInt8, UInt8, UInt32)] = [(ldAbs, 0, 0, offNr)]
        if let bit = a.abiBit { native.append((jge, 0, 0, bit)) }           // jt patched: → DENY
        native.append((jeq, 0, 0, a.socket))                                  // jf patched: → ALLOW
        native.append((ldAbs, 0, 0, offArg0))
        native.append((jeq, 0, 0, UInt32(AF_UNIX)))                           // jt → DENY, jf → ALLOW
        var compat: [(UInt16, UInt8, UInt8, UInt32)] = []
        if let c = a.compat {
            compat.append((ldAbs, 0, 0, offArch))
            compat.append((jeq, 0, 0, c.audit))                               // jf → ALLOW (unknown arch: the kernel's own checks)
            compat.append((ldAbs, 0, 0, offNr))
            for n in compatCalls { compat.append((jeq, 0, 0, n)) }            // jt → DENY
        }
        let start = 2
        let allowAt = start + native.count + compat.count
        let denyAt = allowAt + 1
        p.append((ldAbs, 0, 0, offArch))
        p.append((jeq, 0, UInt8(native.count), a.audit))                       // not native → compat block
        func rel(_ from: Int, _ to: Int) -> UInt8 { UInt8(to - from - 1) }
        for (i, ins) in native.enumerated() {
            let at = start + i
            var ins = ins
            if ins.0 == jge { ins.1 = rel(at, denyAt) }
            else if ins.0 == jeq && ins.3 == a.socket && i < native.count - 1 { ins.2 = rel(at, allowAt) }
            else if ins.0 == jeq { ins.1 = rel(at, denyAt); ins.2 = rel(at, allowAt) }
            p.append(ins)
        }
        let compatStart = start + native.count
        for (i, ins) in compat.enumerated() {
            let at = compatStart + i
            var ins = ins
            if i == 1 { ins.2 = rel(at, allowAt) }
            else if ins.0 == jeq { ins.1 = rel(at, denyAt) }
            p.append(ins)
        }
        p.append((ret, 0, 0, allow))
        p.append((ret, 0, 0, denyEACCES))
        var bytes: [UInt8] = []
        for (code, jt, jf, k) in p {
            bytes += [UInt8(code & 0xff), UInt8(code >> 8), jt, jf]
            bytes += [UInt8(k & 0xff), UInt8((k >> 8) & 0xff), UInt8((k >> 16) & 0xff), UInt8(k >> 24)]
        }
        return bytes
    }

    /// Built once: the same for every run.
    private static let compiled = program()

    /// A pipe's read end holding the program, for bwrap's `--seccomp`; nil when it cannot be made.
    static func descriptor() -> Int32? {
        guard let bytes = compiled, let pipe = Subprocess.makePipe() else { return nil }
        let written = bytes.withUnsafeBytes { write(pipe.write, $0.baseAddress, $0.count) }
        close(pipe.write)
        guard written == bytes.count else { close(pipe.read); return nil }
        return pipe.read
    }
}
