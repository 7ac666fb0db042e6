/// A blob's upload under way (`PATCH /v1/blobs/{sha256}`): the bytes one uploader has sent so
/// far of the blob it names by its hash, kept between requests so that an upload cut off goes on
/// from where it stopped.
package struct BlobUpload: Sendable, Equatable {
    /// The blob's SHA-256, 64 lowercase hex digits, as the uploader named it.
    package var sha256: String
    /// Who sends it: a named token's name; `""` for the socket's owner and the file token.
    package var uploader: String
    /// The whole blob's size in bytes, as the upload's first request said.
    package var byteSize: Int64
    /// How many bytes are held so far.
    package var received: Int64
    /// How many chunks hold them, in order.
    package var chunkCount: Int
    /// When bytes last came, in seconds since 1970.
    package var updatedAt: Double

    /// The most bytes a chunk of an upload holds, as a stored blob's chunks do: 256 KiB.
    package static let chunkLimit = 256 * 1024

    /// An upload's state as stored.
    package init(sha256: String, uploader: String, byteSize: Int64, received: Int64, chunkCount: Int, updatedAt: Double) {
        self.sha256 = sha256
        self.uploader = uploader
        self.byteSize = byteSize
        self.received = received
        self.chunkCount = chunkCount
        self.updatedAt = updatedAt
    }
}
