import CGLib

/// SHA-256 (FIPS 180-4), to name content-addressed cache files: GLib's `GChecksum`.
///
/// GLib is already loaded in the daemon (GStreamer depends on it), so hashing costs no
/// library of its own; swift-crypto, measured in the same place, added 10 MB to a
/// program's resident set and 5 ms to its start. Shared by the artwork cache (MPRIS) and
/// the music library's image store.
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
        // Never nil for a type GLib supports; SHA-256 is one since GLib 2.16.
        let checksum = g_checksum_new(G_CHECKSUM_SHA256)!
        defer { g_checksum_free(checksum) }
        g_checksum_update(checksum, buffer.baseAddress?.assumingMemoryBound(to: guchar.self), gssize(buffer.count))
        var digest = [UInt8](repeating: 0, count: digestByteCount)
        var length = gsize(digestByteCount)
        digest.withUnsafeMutableBufferPointer { g_checksum_get_digest(checksum, $0.baseAddress, &length) }
        return digest
    }
}
