import Foundation
@testable import Media
@testable import TestSupport

/// A PNG decoder that shares no code with the node and forgives nothing: Python's own zlib and a
/// few lines of chunk parsing and unfiltering. libpng and ffmpeg accept some broken files (a
/// stream cut short before its Adler-32, data after its end); this one fails on every chunk CRC,
/// on a zlib stream that is not exactly one complete stream with the right Adler-32, on an
/// unknown filter byte and on a wrong amount of image data, naming what it found.
enum StrictPNGDecoder {
    static let script = #"""
import struct, sys, zlib
data = open(sys.argv[1], 'rb').read()
assert data[:8] == b'\x89PNG\r\n\x1a\n', 'no PNG signature'
pos, chunks = 8, []
while pos < len(data):
    n, = struct.unpack('>I', data[pos:pos + 4])
    kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
    crc, = struct.unpack('>I', data[pos + 8 + n:pos + 12 + n])
    assert zlib.crc32(kind + body) == crc, 'bad CRC in %r chunk %d' % (kind, len(chunks))
    chunks.append((kind, body))
    pos += 12 + n
assert pos == len(data), 'truncated chunk'
kinds = [k for k, _ in chunks]
assert kinds[0] == b'IHDR' and kinds[-1] == b'IEND' and kinds.count(b'IEND') == 1, kinds
idat = [i for i, k in enumerate(kinds) if k == b'IDAT']
assert idat and idat == list(range(idat[0], idat[-1] + 1)), 'IDAT chunks not consecutive'
w, h, depth, color, method, filtering, interlace = struct.unpack('>IIBBBBB', chunks[0][1])
assert (depth, color, method, filtering, interlace) == (8, 2, 0, 0, 0), 'not 8-bit RGB, non-interlaced'
stream = zlib.decompressobj()  # zlib header and Adler-32 checked here
raw = stream.decompress(b''.join(chunks[i][1] for i in idat))
assert stream.eof, 'zlib stream does not end (no final block or no Adler-32)'
assert not stream.unused_data, 'data after the zlib stream'
stride = w * 3
assert len(raw) == h * (stride + 1), 'image data is %d bytes, not %d' % (len(raw), h * (stride + 1))
out, prev = bytearray(), bytearray(stride)
for y in range(h):
    f, row = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    assert f <= 4, 'filter type %d on row %d' % (f, y)
    for i in range(stride) if f else ():
        a = row[i - 3] if i >= 3 else 0
        b, c = prev[i], (prev[i - 3] if i >= 3 else 0)
        if f == 1: p = a
        elif f == 2: p = b
        elif f == 3: p = (a + b) // 2
        else:
            pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
            p = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
        row[i] = (row[i] + p) & 0xff
    out += row
    prev = row
open(sys.argv[2], 'wb').write(out)
print(w, h)
"""#

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static func decode(_ png: [UInt8]) throws -> DecodedImage {
        let dir = TestPaths.tempDir("png-strict")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Data(png).write(to: URL(fileURLWithPath: dir + "/in.png"))
        let r = try runProcess("/usr/bin/python3", ["-c", script, dir + "/in.png", dir + "/out.rgb"])
        guard r.code == 0 else { throw Failure(description: "strict PNG check: \(r.stderr)") }
        let size = r.stdout.split(separator: " ").compactMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        guard size.count == 2 else { throw Failure(description: "strict PNG check printed \(r.stdout)") }
        let rgb = [UInt8](try Data(contentsOf: URL(fileURLWithPath: dir + "/out.rgb")))
        return DecodedImage(width: size[0], height: size[1], rgb: rgb)
    }
}
