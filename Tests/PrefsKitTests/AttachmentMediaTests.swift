import Foundation
import PrefsKit
import SampleImages
import Testing

@Suite("What an upload is")
struct AttachmentMediaTests {
    let png = ImageHeader(sniffing: SampleImage.png(width: 64, height: 32))
    let gif = ImageHeader(sniffing: SampleImage.gif(width: 5, height: 6))

    /// What `AttachmentMedia` decides, or the message it refuses with.
    func decide(_ filename: String, type: String? = nil, kind: PrefsKit.Attachment.Kind? = nil, header: ImageHeader?) -> Result<AttachmentMedia, PrefsError> {
        Result { try AttachmentMedia(AttachmentUpload(filename: filename, kind: kind, mimeType: type), header: header) }
            .mapError { $0 as? PrefsError ?? PrefsError(.internal, "\($0)") }
    }

    @Test("A declared image type that the bytes are gets their size")
    func declaredAndTrue() throws {
        let media = try decide("a.bin", type: "image/png", header: png).get()
        #expect(media == AttachmentMedia(mimeType: "image/png", kind: .image, width: 64, height: 32))
        #expect(try decide("a.jpg", type: "image/gif", kind: .gif, header: gif).get().width == 5)
        #expect(try decide("a", type: "image/png", kind: .drawing, header: png).get().kind == .drawing)
    }

    @Test("Without a Content-Type, recognised bytes beat the name; else the name's guess stands")
    func guessed() throws {
        #expect(try decide("photo.jpg", header: png).get() == AttachmentMedia(mimeType: "image/png", kind: .image, width: 64, height: 32))
        #expect(try decide("scan", kind: .image, header: png).get().mimeType == "image/png")
        #expect(try decide("photo.jpg", header: nil).get() == AttachmentMedia(mimeType: "image/jpeg", kind: .image))
        #expect(try decide("photo.heic", kind: .image, header: nil).get().mimeType == "image/heic")
        #expect(try decide("notes.txt", header: nil).get() == AttachmentMedia(mimeType: "text/plain", kind: .file))
        #expect(try decide("notes.txt", kind: .video, header: nil).get().kind == .video)
    }

    @Test("Types that claim no image are taken as they are, without a size")
    func noImageClaimed() throws {
        #expect(try decide("clip.mp4", type: "video/mp4", header: png).get() == AttachmentMedia(mimeType: "video/mp4", kind: .video))
        #expect(try decide("a.png", type: "application/pdf", kind: .file, header: png).get().width == nil)
        #expect(try decide("a.heic", type: "image/heic", header: nil).get() == AttachmentMedia(mimeType: "image/heic", kind: .image))
    }

    @Test("Bytes that are not the image format claimed are refused")
    func refused() {
        let cases: [(String, String?, PrefsKit.Attachment.Kind?, ImageHeader?, String)] = [
            ("a.png", "image/png", nil, nil, "claims image/png (from its Content-Type), but its bytes are no image format"),
            ("a.png", "image/png", nil, gif, "but its bytes are a GIF image"),
            ("a.heic", "image/heic", nil, png, "claims image/heic (from its Content-Type), but its bytes are a PNG image"),
            ("a.jpg", nil, .image, nil, "claims image/jpeg (from its file name, kind=image), but its bytes are no image"),
            ("a.bin", nil, .image, nil, "kind=image, but its bytes are not an image prefsd recognises"),
            ("a.png", nil, .gif, nil, "kind=gif, but its bytes are not a GIF image"),
            ("a.gif", nil, .gif, png, "kind=gif, which does not fit its type image/png (from its bytes)"),
            ("a.png", "image/png", .video, png, "kind=video, which does not fit its type image/png (from its Content-Type)"),
            ("a.mp3", "audio/mpeg", .image, nil, "kind=image, which does not fit its type audio/mpeg"),
            ("a.mp4", nil, .audio, nil, "kind=audio, which does not fit its type video/mp4 (from its file name)"),
        ]
        for (filename, type, kind, header, message) in cases {
            let result = decide(filename, type: type, kind: kind, header: header)
            guard case .failure(let error) = result else {
                Issue.record("\(filename) \(type ?? "-") \(kind?.rawValue ?? "-"): accepted as \(result)")
                continue
            }
            #expect(error.code == .invalidRequest)
            #expect(error.message.contains(message), "\(error.message)")
            #expect(error.message.hasSuffix("nothing was kept."))
        }
    }
}
