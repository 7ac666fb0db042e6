import PrefsKit

/// How a replica reaches its upstream: one ``SyncRequest`` out, its ``SyncAnswer`` back (over
/// HTTP in `prefsd --upstream` and an `EmbeddedStore` given an upstream; directly, with faults,
/// in the deterministic simulation).
package protocol SyncTransport: Sendable {
    /// Sends `request` and returns the upstream's answer.
    ///
    /// - Throws: ``PrefsError`` — `unauthorized` or `forbidden` when the upstream refuses the
    ///   device's token, `unreachable` when it cannot be reached, `unavailable` when it answers
    ///   that it cannot serve now; any other error the upstream answered.
    func exchange(_ request: SyncRequest) async throws -> SyncAnswer

    /// Releases what the transport holds (its connections), once the replica has stopped
    /// syncing through it. Harmless twice.
    func shutdown() async
}

extension SyncTransport {
    /// Nothing to release.
    package func shutdown() async {}
}
