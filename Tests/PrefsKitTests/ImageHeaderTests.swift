import Foundation
import PrefsKit
import SampleImages
import Testing

@Suite("Image headers")
struct ImageHeaderTests {
    @Test("Each format's size, from hand-made headers")
    func sizes() {
        let cases: [(Data, ImageHeader.Format, Int, Int)] = [
            (SampleImage.png(width: 640, height: 480), .png, 640, 480),
            (SampleImage.png(width: 70_000, height: 1), .png, 70_000, 1),
            (SampleImage.gif(width: 320, height: 200), .gif, 320, 200),
            (SampleImage.jpeg(width: 4032, height: 3024), .jpeg, 4032, 3024),
            (SampleImage.webPLossy(width: 550, height: 368), .webp, 550, 368),
            (SampleImage.webPLossless(width: 16_384, height: 3), .webp, 16_384, 3),
            (SampleImage.webPExtended(width: 1, height: 16_777_216), .webp, 1, 16_777_216),
        ]
        for (bytes, format, width, height) in cases {
            let header = ImageHeader(sniffing: bytes + Data(count: 100))
            #expect(header == ImageHeader(format: format, width: width, height: height), "\(format) \(width)×\(height)")
        }
    }

    @Test("A JPEG's size after large metadata segments, within the prefix; beyond it, unknown")
    func jpegAfterMetadata() {
        let inPrefix = SampleImage.jpeg(width: 3000, height: 2000, metadataBytes: 100_000)
        #expect(inPrefix.count < ImageHeader.prefixLength)
        #expect(ImageHeader(sniffing: inPrefix) == ImageHeader(format: .jpeg, width: 3000, height: 2000))

        let beyond = SampleImage.jpeg(width: 3000, height: 2000, metadataBytes: ImageHeader.prefixLength)
        #expect(ImageHeader(sniffing: beyond) == ImageHeader(format: .jpeg))
    }

    @Test("A JPEG without a frame before its scan, or with a broken segment, has no size")
    func jpegWithoutFrame() {
        let scanFirst = Data([0xFF, 0xD8, 0xFF, 0xDA, 0x00, 0x08]) + SampleImage.jpeg(width: 5, height: 5).dropFirst(2)
        #expect(ImageHeader(sniffing: scanFirst) == ImageHeader(format: .jpeg))
        let garbage = Data([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x04, 0x00, 0x00, 0x12, 0x34])
        #expect(ImageHeader(sniffing: garbage) == ImageHeader(format: .jpeg))
    }

    @Test("A signature cut short of the size still names the format; a zero size is unknown")
    func truncated() {
        #expect(ImageHeader(sniffing: SampleImage.png(width: 10, height: 10).prefix(18)) == ImageHeader(format: .png))
        #expect(ImageHeader(sniffing: SampleImage.gif(width: 10, height: 10).prefix(7)) == ImageHeader(format: .gif))
        #expect(ImageHeader(sniffing: SampleImage.webPLossy(width: 10, height: 10).prefix(16)) == ImageHeader(format: .webp))
        #expect(ImageHeader(sniffing: SampleImage.jpeg(width: 10, height: 10).prefix(40)) == ImageHeader(format: .jpeg))
        #expect(ImageHeader(sniffing: SampleImage.gif(width: 0, height: 7)) == ImageHeader(format: .gif, height: 7))
    }

    @Test("Bytes that are no recognised image")
    func notImages() {
        for bytes in [Data(), Data("hello".utf8), Data("%PDF-1.7".utf8), Data("RIFF\0\0\0\0WAVEfmt ".utf8), Data([0x89, 0x50, 0x4E])] {
            #expect(ImageHeader(sniffing: bytes) == nil, "\(Array(bytes))")
        }
    }

    @Test("Formats by MIME type, with aliases")
    func formatsByMIMEType() {
        #expect(ImageHeader.Format(mimeType: "image/jpg") == .jpeg)
        #expect(ImageHeader.Format(mimeType: "IMAGE/PNG") == .png)
        #expect(ImageHeader.Format(mimeType: "image/apng") == .png)
        #expect(ImageHeader.Format(mimeType: "image/heic") == nil)
        #expect(ImageHeader.Format.allCases.allSatisfy { ImageHeader.Format(mimeType: $0.mimeType) == $0 })
    }
}
