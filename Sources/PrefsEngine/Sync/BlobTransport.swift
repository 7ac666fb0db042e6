import Foundation
import PrefsKit

/// How a replica moves attachments' bytes to and from its upstream, beside its exchanges
/// (``SyncTransport``): each blob once, named by its SHA-256 (`/v1/blobs/{sha256}`, over HTTP in
/// `prefsd --upstream` and an `EmbeddedStore` given an upstream), an upload cut off going on from
/// the bytes the upstream holds.
package protocol BlobTransport: Sendable {
    /// Where the blob `sha256` stands at the upstream, for the device's token: held whole (its
    /// size), or how many bytes of it the device's upload holds there.
    ///
    /// - Throws: ``PrefsError`` — `unreachable` when the upstream cannot be reached; any error it
    ///   answered.
    func heldOffset(of sha256: String) async throws -> BlobState

    /// Sends the blob `sha256`, `byteSize` bytes long, from the bytes the upstream holds of it
    /// (none if it holds it whole), going on from there after a cut: `bytes` gives the blob's
    /// bytes from an offset on, read as they are sent.
    ///
    /// - Returns: The blob's size, once the upstream holds it.
    /// - Throws: ``PrefsError`` — `digest_mismatch` if the bytes do not hash to `sha256`,
    ///   `too_large` over the upstream's attachment limit, `unreachable` once tries stop getting
    ///   further; any other error the upstream answered, or `bytes` threw.
    func upload(
        sha256: String, byteSize: Int64, bytes: @escaping @Sendable (_ offset: Int64) async throws -> AsyncThrowingStream<Data, any Error>
    ) async throws -> Int64

    /// The bytes of the blob `sha256` from the upstream, as they come, read as the caller asks
    /// for them (none held beyond the next).
    ///
    /// - Throws: ``PrefsError`` `not_found` if the upstream holds no such blob for the device,
    ///   `unreachable` if it cannot be reached; the bytes throw `unreachable` if the connection
    ///   is lost midway.
    func download(sha256: String) async throws -> AsyncThrowingStream<Data, any Error>
}
