import Foundation
@testable import Support
import Testing

/// SHA-256 against FIPS 180-4's examples and against `sha256sum` for every tail length around the
/// block edges and for a file-sized input (whole blocks are read in place, the tail is padded).
struct SHA256Tests {
    @Test func fipsExamples() {
        #expect(SHA256.hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256.hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }

    @Test func tailsAndABigInputMatchSha256sum() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ocn-sha-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        var sizes = Array(50...130) + [1 << 20, (3 << 20) + 7]
        sizes.append(0)
        for n in sizes {
            let bytes = (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ n) }
            let file = dir.appendingPathComponent("\(n)")
            try Data(bytes).write(to: file)
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
            p.arguments = [file.path]
            let out = Pipe()
            p.standardOutput = out
            try p.run()
            p.waitUntilExit()
            let expected = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).prefix(64)
            #expect(SHA256.hash(bytes).map { $0.hex() }.joined() == expected, "\(n) bytes")
            #expect(SHA256.hash(bytes[...]) == SHA256.hash(bytes), "a slice hashes like the array")
        }
    }
}
