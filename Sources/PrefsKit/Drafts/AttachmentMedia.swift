import Foundation

/// What an uploaded file is — its MIME type, kind and size in pixels — from what the upload says
/// (``AttachmentUpload``) and what its first bytes are (`ImageHeader`). Refuses an upload whose
/// claims contradict each other or its bytes. Pure: decided once the first
/// `ImageHeader/prefixLength` bytes are in, before the rest is read.
///
/// - The MIME type is the declared one (`Content-Type`). Without one, it is the sniffed image
///   format's when the bytes are clearly PNG, JPEG, GIF or WebP (the bytes beat the name), else
///   the one the file name's extension suggests. A name is only a hint, not a claim: a file
///   named `photo.jpg` whose bytes are no recognised image is kept as it is, typed by its name.
/// - An upload claims an image format when its declared MIME type is an image type, or when its
///   `kind` is `image` or `gif`. Then the bytes must be that format: an `image/png` body that is
///   not PNG, an `image/heic` body that is PNG, `kind=gif` on a PNG, or `kind=image` on bytes that
///   are no recognised image and whose type names no other image format, is refused. Image types
///   prefsd cannot recognise (HEIC, SVG, …) are taken on trust.
/// - A `kind` that contradicts the MIME type (`video` for `image/png`, `image` for `audio/mpeg`)
///   is refused; without a `kind`, the MIME type suggests one.
/// - `width` and `height` come only from the bytes, and only when they are the stored type's format.
package struct AttachmentMedia: Sendable, Hashable {
    /// The MIME type to store.
    package var mimeType: String
    /// The kind given, else the one the MIME type suggests.
    package var kind: Attachment.Kind
    /// In pixels, when the bytes are an image of the stored type that says it.
    package var width: Int?
    /// In pixels, when the bytes are an image of the stored type that says it.
    package var height: Int?

    /// What an attachment is, given outright.
    package init(mimeType: String, kind: Attachment.Kind, width: Int? = nil, height: Int? = nil) {
        self.mimeType = mimeType
        self.kind = kind
        self.width = width
        self.height = height
    }

    /// Decides what `upload` is, given the header its bytes begin with (nil: no recognised image);
    /// throws `invalid_request` if the upload contradicts itself or its bytes.
    package init(_ upload: AttachmentUpload, header: ImageHeader?) throws {
        let declared = upload.mimeType?.lowercased()
        let mimeType = declared ?? header?.format.mimeType ?? Filename.mimeType(for: Filename.sanitize(upload.filename))
        let origin = declared != nil ? "its Content-Type" : header != nil ? "its bytes" : "its file name"
        if let kind = upload.kind, !kind.admits(mimeType) {
            if declared == nil, header == nil, kind == .image || kind == .gif {
                throw PrefsError(
                    .invalidRequest,
                    "The upload says kind=\(kind.rawValue), but its bytes are not \(kind == .gif ? "a GIF image" : "an image prefsd recognises (PNG, JPEG, GIF or WebP)"), "
                        + "and no Content-Type says what they are; nothing was kept.")
            }
            throw PrefsError(
                .invalidRequest,
                "The upload says kind=\(kind.rawValue), which does not fit its type \(mimeType) (from \(origin)); nothing was kept.")
        }
        let kind = upload.kind ?? Attachment.Kind(mimeType: mimeType)
        let claimsImage = mimeType.hasPrefix("image/") && (declared != nil || upload.kind == .image || upload.kind == .gif)
        let claimed = ImageHeader.Format(mimeType: mimeType)
        if claimsImage, header?.format != claimed, claimed != nil || header != nil {
            let found = header.map { "a \($0.format.name) image" } ?? "no image format prefsd recognises"
            throw PrefsError(
                .invalidRequest,
                "The upload claims \(mimeType) (from \(origin)\(upload.kind.map { ", kind=\($0.rawValue)" } ?? "")), "
                    + "but its bytes are \(found); nothing was kept.")
        }
        let measured = header != nil && header?.format == claimed
        self.init(mimeType: mimeType, kind: kind, width: measured ? header?.width : nil, height: measured ? header?.height : nil)
    }
}

extension Attachment.Kind {
    /// Whether an attachment of this kind can have `mimeType`: images and GIFs are image types
    /// (a GIF's exactly `image/gif`); video, audio and drawings are not each other's or images'
    /// (drawings may be images); a file is anything.
    func admits(_ mimeType: String) -> Bool {
        let family = Attachment.Kind(mimeType: mimeType)
        switch self {
        case .image: return family == .image || family == .gif
        case .gif: return family == .gif
        case .video: return family != .image && family != .gif && family != .audio
        case .audio: return family != .image && family != .gif && family != .video
        case .drawing: return family != .video && family != .audio
        case .file: return true
        }
    }
}
