/// SHA-256 (FIPS 180-4), just enough to name content-addressed cache files.
///
/// The project has no crypto dependency and FoundationEssentials has no
/// digest API, so this is a small, self-contained implementation, shared by
/// the artwork cache (MPRIS) and the music library's image store. It works
/// on contiguous bytes through raw pointers: no allocation per byte or per
/// block, so a megabyte hashes in a few milliseconds in release builds.
public enum SHA256 {
    /// The digest size in bytes.
    public static let digestByteCount = 32

    /// The SHA-256 digest of `bytes`: always 32 bytes.
    ///
    /// Contiguous collections (`[UInt8]`, `Data`, slices) are read in place;
    /// any other collection is copied into an array once first.
    public static func hash(_ bytes: some Collection<UInt8>) -> [UInt8] {
        if let digest = bytes.withContiguousStorageIfAvailable({ hash(UnsafeRawBufferPointer($0)) }) {
            return digest
        }
        return Array(bytes).withUnsafeBytes { hash($0) }
    }

    /// Lowercase hexadecimal spelling of `bytes`, two digits a byte, as printed by `sha256sum`.
    public static func hex(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The SHA-256 digest of the raw bytes in `buffer`: always 32 bytes.
    public static func hash(_ buffer: UnsafeRawBufferPointer) -> [UInt8] {
        var state: [UInt32] = [
            0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a,
            0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19,
        ]
        state.withUnsafeMutableBufferPointer { h in
            roundConstants.withUnsafeBufferPointer { k in
                withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { w in
                    // Whole 64-byte blocks straight from the caller's memory.
                    let wholeBlocks = buffer.count / 64
                    if let base = buffer.baseAddress {
                        for block in 0..<wholeBlocks {
                            compress(base + block * 64, into: h, schedule: w, constants: k)
                        }
                    }
                    // The tail, the 0x80 marker and the 64-bit big-endian bit length:
                    // one block if they fit in 64 bytes, else two.
                    withUnsafeTemporaryAllocation(byteCount: 128, alignment: 8) { tail in
                        tail.initializeMemory(as: UInt8.self, repeating: 0)
                        let remainder = buffer.count - wholeBlocks * 64
                        if remainder > 0 {
                            tail.copyMemory(from: UnsafeRawBufferPointer(rebasing: buffer[(wholeBlocks * 64)...]))
                        }
                        tail[remainder] = 0x80
                        let tailBlocks = remainder + 9 <= 64 ? 1 : 2
                        let bitLength = UInt64(buffer.count) &* 8
                        tail.storeBytes(of: bitLength.bigEndian, toByteOffset: tailBlocks * 64 - 8, as: UInt64.self)
                        for block in 0..<tailBlocks {
                            compress(UnsafeRawPointer(tail.baseAddress!) + block * 64, into: h, schedule: w, constants: k)
                        }
                    }
                }
            }
        }
        var digest: [UInt8] = []
        digest.reserveCapacity(digestByteCount)
        for word in state {
            digest.append(UInt8(truncatingIfNeeded: word >> 24))
            digest.append(UInt8(truncatingIfNeeded: word >> 16))
            digest.append(UInt8(truncatingIfNeeded: word >> 8))
            digest.append(UInt8(truncatingIfNeeded: word))
        }
        return digest
    }

    /// Mixes one 64-byte block at `block` into the eight state words `h`.
    /// `w` is scratch space for the 64-word message schedule.
    @inline(__always)
    private static func compress(
        _ block: UnsafeRawPointer,
        into h: UnsafeMutableBufferPointer<UInt32>,
        schedule w: UnsafeMutableBufferPointer<UInt32>,
        constants k: UnsafeBufferPointer<UInt32>
    ) {
        for t in 0..<16 {
            w[t] = UInt32(bigEndian: block.loadUnaligned(fromByteOffset: t * 4, as: UInt32.self))
        }
        for t in 16..<64 {
            let s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3)
            let s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10)
            w[t] = w[t - 16] &+ s0 &+ w[t - 7] &+ s1
        }
        var a = h[0], b = h[1], c = h[2], d = h[3]
        var e = h[4], f = h[5], g = h[6], hh = h[7]
        for t in 0..<64 {
            let sum1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)
            let choice = (e & f) ^ (~e & g)
            let t1 = hh &+ sum1 &+ choice &+ k[t] &+ w[t]
            let sum0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)
            let majority = (a & b) ^ (a & c) ^ (b & c)
            let t2 = sum0 &+ majority
            hh = g
            g = f
            f = e
            e = d &+ t1
            d = c
            c = b
            b = a
            a = t1 &+ t2
        }
        h[0] &+= a
        h[1] &+= b
        h[2] &+= c
        h[3] &+= d
        h[4] &+= e
        h[5] &+= f
        h[6] &+= g
        h[7] &+= hh
    }

    @inline(__always)
    private static func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 {
        (x &>> n) | (x &<< (32 &- n))
    }

    /// The first 32 bits of the fractional parts of the cube roots of the first 64 primes.
    private static let roundConstants: [UInt32] = [
        0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
        0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
        0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
        0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
        0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
        0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
        0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
        0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
    ]
}
