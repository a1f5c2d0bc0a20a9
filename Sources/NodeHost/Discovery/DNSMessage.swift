import Config
import Glibc
import Kit
import Store
import Support

/// The DNS wire format (RFC 1035 §4), only as much as DNS-SD needs: build a query, parse an
/// answer with PTR/SRV/TXT/A/AAAA records. Answers come from the network, so parsing checks every
/// length and follows compression pointers only backwards: a truncated, looping or lying packet is
/// an error, never a crash or a hang.
public struct DNSMessage: Sendable, Equatable {
    public enum RecordType: UInt16, Sendable {
        case a = 1, ptr = 12, txt = 16, aaaa = 28, srv = 33, opt = 41
    }

    public enum RData: Sendable, Equatable {
        case ptr(DNSName)
        case srv(priority: UInt16, weight: UInt16, port: UInt16, target: DNSName)
        /// The character-strings of a TXT record, raw.
        case txt([[UInt8]])
        case a(String)
        case aaaa(String)
        case other([UInt8])
    }

    public struct Record: Sendable, Equatable {
        public let name: DNSName
        public let type: UInt16
        public let ttl: UInt32
        public let data: RData
    }

    public var id: UInt16
    public var flags: UInt16
    public var questions: [(name: DNSName, type: UInt16)] = []
    public var answers: [Record] = []
    public var authorities: [Record] = []
    public var additionals: [Record] = []

    public var isResponse: Bool { flags & 0x8000 != 0 }
    public var truncated: Bool { flags & 0x0200 != 0 }
    /// 0 = no error, 3 = NXDOMAIN, 2 = server failure, 5 = refused.
    public var rcode: Int { Int(flags & 0x000F) }

    public static func == (a: DNSMessage, b: DNSMessage) -> Bool {
        a.id == b.id && a.flags == b.flags && a.answers == b.answers && a.authorities == b.authorities
            && a.additionals == b.additionals && a.questions.map(\.name) == b.questions.map(\.name)
            && a.questions.map(\.type) == b.questions.map(\.type)
    }

    /// Every answer and additional record (servers put SRV targets' addresses in additionals).
    public var allRecords: [Record] { answers + additionals }

    // MARK: building

    /// A recursive query for one name and type, advertising a 4096-byte UDP payload (EDNS0) so
    /// a TXT-heavy answer does not come back truncated.
    public static func query(id: UInt16, name: DNSName, type: RecordType) -> [UInt8] {
        var out: [UInt8] = []
        func u16(_ v: UInt16) { out += [UInt8(v >> 8), UInt8(v & 0xFF)] }
        u16(id); u16(0x0100) // RD
        u16(1); u16(0); u16(0); u16(1)
        for l in name.labels { out.append(UInt8(l.count)); out += l }
        out.append(0)
        u16(type.rawValue); u16(1) // IN
        out.append(0); u16(RecordType.opt.rawValue); u16(4096); out += [0, 0, 0, 0]; u16(0)
        return out
    }

    // MARK: parsing

    public struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        public let description: String
        init(_ d: String) { description = d }
    }

    public static func parse(_ bytes: [UInt8]) throws(ParseError) -> DNSMessage {
        var r = Reader(bytes: bytes)
        let id = try r.u16(), flags = try r.u16()
        let qd = try r.u16(), an = try r.u16(), ns = try r.u16(), ar = try r.u16()
        var m = DNSMessage(id: id, flags: flags)
        for _ in 0..<qd {
            let name = try r.name()
            let type = try r.u16()
            _ = try r.u16()
            m.questions.append((name, type))
        }
        for _ in 0..<an { m.answers.append(try r.record()) }
        for _ in 0..<ns { m.authorities.append(try r.record()) }
        for _ in 0..<ar { m.additionals.append(try r.record()) }
        return m
    }

    struct Reader {
        let bytes: [UInt8]
        var pos = 0

        mutating func u8() throws(ParseError) -> UInt8 {
            guard pos < bytes.count else { throw ParseError("truncated at byte \(pos)") }
            defer { pos += 1 }
            return bytes[pos]
        }

        mutating func u16() throws(ParseError) -> UInt16 { UInt16(try u8()) << 8 | UInt16(try u8()) }

        mutating func u32() throws(ParseError) -> UInt32 { UInt32(try u16()) << 16 | UInt32(try u16()) }

        mutating func take(_ n: Int) throws(ParseError) -> [UInt8] {
            guard n >= 0, pos + n <= bytes.count else { throw ParseError("truncated: \(n) bytes needed at \(pos), \(bytes.count - pos) left") }
            defer { pos += n }
            return Array(bytes[pos..<(pos + n)])
        }

        /// A possibly compressed name at the current position. A pointer must point before the
        /// place it was read from, so following pointers always terminates.
        mutating func name() throws(ParseError) -> DNSName {
            var labels: [[UInt8]] = []
            var at = pos
            var jumped = false
            var length = 1
            while true {
                guard at < bytes.count else { throw ParseError("truncated name at byte \(at)") }
                let len = bytes[at]
                switch len & 0xC0 {
                case 0x00:
                    if len == 0 {
                        if !jumped { pos = at + 1 }
                        return DNSName(labels: labels)
                    }
                    let end = at + 1 + Int(len)
                    guard end <= bytes.count else { throw ParseError("truncated label at byte \(at)") }
                    length += 1 + Int(len)
                    guard length <= 255 else { throw ParseError("name longer than 255 bytes at byte \(pos)") }
                    labels.append(Array(bytes[(at + 1)..<end]))
                    at = end
                case 0xC0:
                    guard at + 1 < bytes.count else { throw ParseError("truncated compression pointer at byte \(at)") }
                    let target = Int(len & 0x3F) << 8 | Int(bytes[at + 1])
                    guard target < at else { throw ParseError("compression pointer at byte \(at) does not point backwards (to \(target))") }
                    if !jumped { pos = at + 2; jumped = true }
                    at = target
                default:
                    throw ParseError("unsupported label type 0x\(String(len, radix: 16)) at byte \(at)")
                }
            }
        }

        mutating func record() throws(ParseError) -> Record {
            let name = try self.name()
            let type = try u16()
            _ = try u16() // class (or the UDP size for OPT)
            let ttl = try u32()
            let rdlen = Int(try u16())
            let start = pos
            guard start + rdlen <= bytes.count else { throw ParseError("record data of \(name.text) runs past the end of the message") }
            let data: RData
            switch RecordType(rawValue: type) {
            case .ptr:
                data = .ptr(try self.name())
            case .srv:
                guard rdlen >= 7 else { throw ParseError("SRV record of \(name.text) is too short (\(rdlen) bytes)") }
                let pri = try u16(), weight = try u16(), port = try u16()
                data = .srv(priority: pri, weight: weight, port: port, target: try self.name())
            case .txt:
                var strings: [[UInt8]] = []
                while pos < start + rdlen {
                    let n = Int(try u8())
                    guard pos + n <= start + rdlen else { throw ParseError("TXT string of \(name.text) runs past its record") }
                    strings.append(try take(n))
                }
                data = .txt(strings)
            case .a:
                guard rdlen == 4 else { throw ParseError("A record of \(name.text) has \(rdlen) bytes, not 4") }
                data = .a(try take(4).map(String.init).joined(separator: "."))
            case .aaaa:
                guard rdlen == 16 else { throw ParseError("AAAA record of \(name.text) has \(rdlen) bytes, not 16") }
                data = .aaaa(DNSMessage.ipv6Text(try take(16)))
            default:
                data = .other(try take(rdlen))
            }
            guard pos == start + rdlen else { throw ParseError("record data of \(name.text) has \(rdlen) bytes but its content used \(pos - start)") }
            return Record(name: name, type: type, ttl: ttl, data: data)
        }
    }

    static func ipv6Text(_ b: [UInt8]) -> String {
        var addr = in6_addr()
        withUnsafeMutableBytes(of: &addr) { $0.copyBytes(from: b) }
        var buf = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        inet_ntop(AF_INET6, &addr, &buf, socklen_t(buf.count))
        return String(cBuffer: buf)
    }
}
