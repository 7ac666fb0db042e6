import PrefsKit

/// The refusal of a blob upload's request whose `Upload-Offset` is not where the upload stands:
/// nothing was changed, and the answer says where it stands (`Upload-Offset`), for the uploader
/// to go on from there.
package struct BlobOffsetConflict: Error, Sendable {
    /// How many bytes of the blob the uploader's upload holds.
    package var held: Int64
    /// The refusal, `conflict`.
    package var error: PrefsError

    /// The refusal of an upload at `offset` of a blob of `length` bytes, when the uploader's
    /// upload under way is `upload` (nil: none is).
    init(offset: Int64, length: Int64, upload: BlobUpload?) {
        held = upload?.received ?? 0
        let stands =
            if let upload, upload.byteSize != length {
                "an upload of it \(upload.byteSize) bytes long holds \(upload.received) bytes; one of another length starts at offset 0"
            } else {
                "the store holds \(held) of its bytes from this uploader"
            }
        error = PrefsError(
            .conflict,
            "Upload-Offset \(offset) is not where the upload of \(upload?.sha256 ?? "this blob") stands: \(stands). Nothing was changed; send the bytes from offset \(held)."
        )
    }
}
