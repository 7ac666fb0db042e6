/// Where a blob named by its SHA-256 stands at a prefsd, for the caller asking
/// (`HEAD /v1/blobs/{sha256}`): what an upload of it goes on from.
public enum BlobState: Sendable, Hashable {
    /// The store holds it whole, and the caller may read it: its size in bytes.
    case held(byteSize: Int64)
    /// The store holds it not, or not for the caller: how many bytes of it the caller's own
    /// upload holds so far (0 if none is under way), the offset to send the rest from.
    case uploading(received: Int64)
}
