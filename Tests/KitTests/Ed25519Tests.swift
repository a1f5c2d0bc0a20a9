import Support
import Testing

/// Support's SHA-512 and Ed25519 against published vectors (FIPS 180-4 examples, RFC 8032 §7.1)
/// and against vectors made with an independent implementation (python3-cryptography, i.e.
/// OpenSSL) for message lengths around SHA-512's block and padding boundaries.
@Suite struct Ed25519Tests {
    private func hex(_ bytes: [UInt8]) -> String { bytes.map { $0.hex() }.joined() }
    private func bytes(_ hex: String) -> [UInt8] {
        var out: [UInt8] = [], chars = Array(hex.utf8)
        while chars.count >= 2 { out.append(UInt8(String(decoding: chars[0..<2], as: UTF8.self), radix: 16)!); chars.removeFirst(2) }
        return out
    }

    @Test func sha512Examples() {
        #expect(hex(SHA512.hash([])) == "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e")
        #expect(hex(SHA512.hash(Array("abc".utf8))) == "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f")
    }

    /// Lengths on each side of the 112-byte padding edge and the 128-byte block.
    @Test(arguments: [
        (111, "a1a111449b198d9b1f538bad7f3fc1022b3a5b1a5e90a0bc860de8512746cbc31599e6c834de3a3235327af0b51ff57bf7acf1974a73014d9c3953812edc7c8d"),
        (112, "c5fbd731d19d2ae1180f001be72c2c1aaba1d7b094b3748880e24593b8e117a750e11c1bd867cc2f96dace8c8b74abd2d5c4f236be444e77d30d1916174070b9"),
        (127, "eab89674feaa34e27aebeeff3c0a4d70070bb872d5e9f186cf1dbbdee517b6e35724d629ff025a5b07185e911ada7e3c8acf830aa0e4f71777bd2d44f504f7f0"),
        (128, "1dffd5e3adb71d45d2245939665521ae001a317a03720a45732ba1900ca3b8351fc5c9b4ca513eba6f80bc7b1d1fdad4abd13491cb824d61b08d8c0e1561b3f7"),
        (239, "cb4c7fd522756d5781ad3a4f590a1d862906b960e7720136cb3fb36b563caa1ea5689134291fa79c80ccc2b4092b41df32ebdcb36dbe79db483440228c1622a8"),
        (240, "6c48466c9f6c07e4ab762c696b7eeb35cfe236fca73683e5fab873ac3489b4d2eb3d7afcce7e8165dbbf37aded3b5b0c889c0b7e0f1790a8330d8677429d91a5"),
        (1000, "5096498d96f50f9a137c4db5b8b0cd38383ad55350fb5a98805fedc31fa1262f1f0cf4d6f12d7ecd8dedd933a4c9126344fe22e937a8ad35fdeae1e876ae698b"),
    ])
    func sha512AroundBlockEdges(length: Int, expected: String) {
        #expect(hex(SHA512.hash((0..<length).map { UInt8($0 % 251) })) == expected)
    }

    /// RFC 8032 §7.1, tests 1–3: seed, public key, message, signature.
    @Test(arguments: [
        ("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60", "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", "",
         "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"),
        ("4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb", "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c", "72",
         "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"),
        ("c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7", "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025", "af82",
         "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a"),
    ])
    func rfc8032(seed: String, publicKey: String, message: String, signature: String) {
        #expect(hex(Ed25519.publicKey(seed: bytes(seed))) == publicKey)
        #expect(hex(Ed25519.sign(seed: bytes(seed), message: bytes(message))) == signature)
    }

    /// Seeds SHA-256("seed<i>"), messages of i·97 bytes ((j·7 + i) mod 256), signed by python3-cryptography.
    @Test(arguments: [
        (0, "8f80338eef733ec67c601349c4a8251393b28deb722cfd0a91907744a26d3dab",
         "dad88d9f735434282a6cc50924f71eb03f10acd0f4ea598f0c7f0842c74327ed62c52f2408c0ce65212c7153739ba3957eefbd11f63cc2968c04700bdb33370c"),
        (1, "cc1983469486418cd66dcdc8664677c263487b736840cfd1532e144386fa7610",
         "18f450b67860baad1431a807337cf506ce484b74608d10b95a297d012a77e7cf98757b02b3dd74b7b6f59bfb10b414f1b7b2e7aabf22716c58399eb64e196c0b"),
        (2, "88166617f91bc145b243c2ae6e1088f1208bf17311cca74dbf032fee25b219e0",
         "acd23633073d4970e0dbd63551b2f1e1f6f6220664e3a840d421ad3f4e2c3757c31361a69ff406f561bca6932889126ad281a0c358289352e8d5cd8892f4de0b"),
        (3, "6f97404947a00311785785217b1759b002cbae16da26e0801f0dcbe4e00d5f45",
         "e09a6021ca909102d7929563af7badab91914e7271e94c4369eae788492b70260aa67a95fa28e42181042b86c81c5f1ba53b4581789f0e06db6c9cc664b01103"),
    ])
    func matchesAnIndependentImplementation(i: Int, publicKey: String, signature: String) {
        let seed = SHA256.hash(Array("seed\(i)".utf8))
        let message = (0..<(i * 97)).map { UInt8(($0 * 7 + i) % 256) }
        #expect(hex(Ed25519.publicKey(seed: seed)) == publicKey)
        #expect(hex(Ed25519.sign(seed: seed, message: message)) == signature)
    }
}
