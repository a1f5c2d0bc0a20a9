import CX11Capture
import Media

/// Reads an XImage's pixel layout from its depth, masks and byte order.
enum X11PixelFormat {
    static func layout(of image: UnsafeMutablePointer<XImage>) -> PixelLayout? {
        let i = image.pointee
        let bpp = Int(i.bits_per_pixel)
        let channels = [UInt(i.red_mask), UInt(i.green_mask), UInt(i.blue_mask)].map { mask in
            (shift: mask == 0 ? 0 : mask.trailingZeroBitCount, bits: mask.nonzeroBitCount)
        }
        var shifts = channels.map(\.shift)
        if i.byte_order == MSBFirst {
            // Big-endian words: byte k holds what little-endian would put in byte (n-1-k).
            guard bpp == 32, channels.allSatisfy({ $0.bits == 8 }) else { return nil }
            shifts = shifts.map { 24 - $0 }
        }
        return PixelLayout.fromChannels(bitsPerPixel: bpp, redShift: shifts[0], redBits: channels[0].bits,
                                        greenShift: shifts[1], greenBits: channels[1].bits,
                                        blueShift: shifts[2], blueBits: channels[2].bits)
    }

    static func describe(_ image: UnsafeMutablePointer<XImage>) -> String {
        let i = image.pointee
        return "\(i.bits_per_pixel) bpp, masks r=0x\(String(i.red_mask, radix: 16)) g=0x\(String(i.green_mask, radix: 16)) " +
               "b=0x\(String(i.blue_mask, radix: 16)), \(i.byte_order == MSBFirst ? "MSB" : "LSB") first"
    }
}
