/// Where a blob named by its hash stands for a caller (`HEAD /v1/blobs/{sha256}`).
package enum BlobState: Sendable, Equatable {
    /// The store holds it whole, and the caller may read it: its size in bytes.
    case held(byteSize: Int64)
    /// The store holds it not, or not for the caller: how many bytes of it the caller's own
    /// upload holds so far (0 if none is under way).
    case uploading(received: Int64)
}
