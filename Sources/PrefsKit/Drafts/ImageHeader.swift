import Foundation

/// What the first bytes of a file say about it as an image: its format, recognised by its
/// signature, and its size in pixels when those bytes hold it. Pure: reads only the bytes given.
///
/// PNG's size is in its `IHDR` chunk, GIF's in its logical screen descriptor, WebP's in its
/// `VP8 `, `VP8L` or `VP8X` chunk — all within the first 30 bytes. JPEG's is in its first
/// `SOFn` segment, which may follow large metadata segments (Exif, ICC profiles); the scan stops
/// at ``prefixLength`` bytes, so a size beyond that stays unknown.
package struct ImageHeader: Sendable, Hashable {
    /// The image formats recognised by their signature.
    package enum Format: String, Sendable, Hashable, CaseIterable {
        case png, gif, jpeg, webp

        /// Its name for people: PNG, GIF, JPEG, WebP.
        package var name: String { self == .webp ? "WebP" : rawValue.uppercased() }

        /// Its MIME type, as stored for an attachment.
        package var mimeType: String { "image/\(rawValue)" }

        /// The format a MIME type names, including common aliases (`image/jpg`, `image/apng`);
        /// nil for other types, images prefsd does not recognise included.
        package init?(mimeType: String) {
            switch mimeType.lowercased() {
            case "image/png", "image/apng", "image/x-png", "image/vnd.mozilla.apng": self = .png
            case "image/gif": self = .gif
            case "image/jpeg", "image/jpg", "image/pjpeg": self = .jpeg
            case "image/webp": self = .webp
            default: return nil
            }
        }
    }

    /// How many leading bytes the sniffing looks at, at most: room for JPEG's largest metadata
    /// segments (64 KiB each) before its size.
    package static let prefixLength = 128 * 1024

    /// The image format the bytes show.
    package var format: Format
    /// In pixels; nil when the bytes given do not hold it (or say 0).
    package var width: Int?
    /// In pixels; nil when the bytes given do not hold it (or say 0).
    package var height: Int?

    /// A header with its format and, when known, its size.
    package init(format: Format, width: Int? = nil, height: Int? = nil) {
        self.format = format
        self.width = width
        self.height = height
    }

    /// The header of the image `bytes` begin with (only the first ``prefixLength`` are read);
    /// nil when they do not begin with a recognised image signature.
    package init?(sniffing bytes: some Collection<UInt8>) {
        let reader = ByteReader(Array(bytes.prefix(Self.prefixLength)))
        if reader.matches([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], at: 0) {
            // Signature, then the IHDR chunk: length (4), type (4), width and height (4 each, big-endian).
            let hasHeader = reader.matches(Array("IHDR".utf8), at: 12)
            self.init(.png, width: hasHeader ? reader.bigEndian(at: 16, count: 4) : nil,
                      height: hasHeader ? reader.bigEndian(at: 20, count: 4) : nil)
        } else if reader.matches(Array("GIF87a".utf8), at: 0) || reader.matches(Array("GIF89a".utf8), at: 0) {
            self.init(.gif, width: reader.littleEndian(at: 6, count: 2), height: reader.littleEndian(at: 8, count: 2))
        } else if reader.matches([0xFF, 0xD8, 0xFF], at: 0) {
            let size = Self.jpegSize(reader)
            self.init(.jpeg, width: size?.width, height: size?.height)
        } else if reader.matches(Array("RIFF".utf8), at: 0) && reader.matches(Array("WEBP".utf8), at: 8) {
            let size = Self.webPSize(reader)
            self.init(.webp, width: size?.width, height: size?.height)
        } else {
            return nil
        }
    }

    /// A header whose zero sizes count as unknown.
    private init(_ format: Format, width: Int?, height: Int?) {
        self.init(format: format, width: width == 0 ? nil : width, height: height == 0 ? nil : height)
    }

    /// Walks JPEG's segments from the start-of-image marker to the first start-of-frame
    /// (`SOF0`…`SOF15`, not `DHT`, `JPG` or `DAC`): precision (1), height, width (2 each,
    /// big-endian). Stops at the start of scan, or where the bytes end.
    private static func jpegSize(_ reader: ByteReader) -> (width: Int, height: Int)? {
        var offset = 2
        while true {
            guard reader.byte(at: offset) == 0xFF else { return nil }
            // Markers may be padded with any number of 0xFF fill bytes.
            while reader.byte(at: offset + 1) == 0xFF { offset += 1 }
            guard let marker = reader.byte(at: offset + 1) else { return nil }
            // Markers without a segment: TEM, RST0…RST7, SOI.
            if marker == 0x01 || (0xD0...0xD8).contains(marker) {
                offset += 2
                continue
            }
            guard marker != 0xD9, marker != 0xDA, let length = reader.bigEndian(at: offset + 2, count: 2), length >= 2 else {
                return nil
            }
            if (0xC0...0xCF).contains(marker), ![0xC4, 0xC8, 0xCC].contains(marker) {
                guard let height = reader.bigEndian(at: offset + 5, count: 2),
                    let width = reader.bigEndian(at: offset + 7, count: 2)
                else { return nil }
                return (width, height)
            }
            offset += 2 + length
        }
    }

    /// The canvas size in WebP's first chunk, after `RIFF`, the file size and `WEBP`.
    private static func webPSize(_ reader: ByteReader) -> (width: Int, height: Int)? {
        if reader.matches(Array("VP8 ".utf8), at: 12) {
            // Lossy: after the chunk size, a 3-byte frame tag and the start code 9D 01 2A, then
            // width and height (2 each, little-endian; the top 2 bits are a scale).
            guard reader.matches([0x9D, 0x01, 0x2A], at: 23), let width = reader.littleEndian(at: 26, count: 2),
                let height = reader.littleEndian(at: 28, count: 2)
            else { return nil }
            return (width & 0x3FFF, height & 0x3FFF)
        }
        if reader.matches(Array("VP8L".utf8), at: 12) {
            // Lossless: after the chunk size, the signature 0x2F, then 14 bits of width − 1 and
            // 14 bits of height − 1, least significant first.
            guard reader.byte(at: 20) == 0x2F, let bits = reader.littleEndian(at: 21, count: 4) else { return nil }
            return ((bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1)
        }
        if reader.matches(Array("VP8X".utf8), at: 12) {
            // Extended: after the chunk size, flags (4), then canvas width − 1 and height − 1 (3 each, little-endian).
            guard let width = reader.littleEndian(at: 24, count: 3), let height = reader.littleEndian(at: 27, count: 3) else {
                return nil
            }
            return (width + 1, height + 1)
        }
        return nil
    }
}

/// Reads numbers at offsets of a byte array; nil past its end.
private struct ByteReader {
    let bytes: [UInt8]

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    func byte(at offset: Int) -> UInt8? {
        bytes.indices.contains(offset) ? bytes[offset] : nil
    }

    /// Whether `expected` is there, at `offset`.
    func matches(_ expected: [UInt8], at offset: Int) -> Bool {
        offset + expected.count <= bytes.count && bytes[offset..<(offset + expected.count)].elementsEqual(expected)
    }

    /// An unsigned number of `count` bytes, most significant first.
    func bigEndian(at offset: Int, count: Int) -> Int? {
        guard offset >= 0, offset + count <= bytes.count else { return nil }
        return bytes[offset..<(offset + count)].reduce(0) { $0 << 8 | Int($1) }
    }

    /// An unsigned number of `count` bytes, least significant first.
    func littleEndian(at offset: Int, count: Int) -> Int? {
        guard offset >= 0, offset + count <= bytes.count else { return nil }
        return bytes[offset..<(offset + count)].reversed().reduce(0) { $0 << 8 | Int($1) }
    }
}
