import Foundation

/// Hand-made image headers for tests: the first bytes of a PNG, GIF, JPEG or WebP file of a given
/// size in pixels, as their specifications lay them out — enough for sniffing, not for decoding.
public enum SampleImage {
    /// PNG: the signature, then an `IHDR` chunk (8-bit RGBA) with its CRC left as zeros.
    public static func png(width: Int, height: Int) -> Data {
        Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) + bigEndian(13, 4) + Data("IHDR".utf8)
            + bigEndian(width, 4) + bigEndian(height, 4) + Data([8, 6, 0, 0, 0]) + Data(count: 4)
    }

    /// GIF89a: the signature and the logical screen descriptor.
    public static func gif(width: Int, height: Int) -> Data {
        Data("GIF89a".utf8) + littleEndian(width, 2) + littleEndian(height, 2) + Data([0xF7, 0, 0])
    }

    /// JPEG: start of image, a JFIF `APP0` segment, `metadataBytes` of an `APP1` (Exif) segment
    /// in segments of at most 64 KiB, fill bytes, a quantisation table, then the baseline start
    /// of frame (`SOF0`) with the size.
    public static func jpeg(width: Int, height: Int, metadataBytes: Int = 0) -> Data {
        var data = Data([0xFF, 0xD8])
        data += segment(0xE0, Data("JFIF\0".utf8) + Data([1, 1, 0, 0, 1, 0, 1, 0, 0]))
        var left = metadataBytes
        while left > 0 {
            let size = min(left, 65_533 - 6)
            data += segment(0xE1, Data("Exif\0\0".utf8) + Data(repeating: 0x2A, count: size))
            left -= size
        }
        data += Data([0xFF, 0xFF])  // fill bytes before a marker are allowed
        data += segment(0xDB, Data([0]) + Data(repeating: 1, count: 64))
        data += segment(0xC0, Data([8]) + bigEndian(height, 2) + bigEndian(width, 2) + Data([3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]))
        return data
    }

    /// Lossy WebP: `RIFF`, `WEBP`, a `VP8 ` chunk with a key frame's tag, start code and size.
    public static func webPLossy(width: Int, height: Int) -> Data {
        riff(Data("VP8 ".utf8) + littleEndian(10, 4) + Data([0x30, 0x01, 0x00, 0x9D, 0x01, 0x2A])
            + littleEndian(width, 2) + littleEndian(height, 2))
    }

    /// Lossless WebP: a `VP8L` chunk with its signature and 14-bit width − 1 and height − 1.
    public static func webPLossless(width: Int, height: Int) -> Data {
        riff(Data("VP8L".utf8) + littleEndian(5, 4) + Data([0x2F]) + littleEndian((width - 1) | (height - 1) << 14, 4))
    }

    /// Extended WebP: a `VP8X` chunk with flags and 24-bit canvas width − 1 and height − 1.
    public static func webPExtended(width: Int, height: Int) -> Data {
        riff(Data("VP8X".utf8) + littleEndian(10, 4) + Data([0x10, 0, 0, 0]) + littleEndian(width - 1, 3)
            + littleEndian(height - 1, 3))
    }

    /// A JPEG segment: marker, then its length (which counts itself) and payload.
    private static func segment(_ marker: UInt8, _ payload: Data) -> Data {
        Data([0xFF, marker]) + bigEndian(payload.count + 2, 2) + payload
    }

    /// `RIFF`, the size of what follows, `WEBP`, then `chunk`.
    private static func riff(_ chunk: Data) -> Data {
        Data("RIFF".utf8) + littleEndian(chunk.count + 4, 4) + Data("WEBP".utf8) + chunk
    }

    private static func bigEndian(_ value: Int, _ count: Int) -> Data {
        Data((0..<count).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * $0)) })
    }

    private static func littleEndian(_ value: Int, _ count: Int) -> Data {
        Data((0..<count).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) })
    }
}
