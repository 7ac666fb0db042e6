/// Request size limits.
package struct ServerLimits: Sendable {
    /// The largest preference value accepted (a `PUT /v1/prefs/{key}` body).
    package var maximumValueBytes: Int
    /// The largest body of other requests (batch, load, schema).
    package var maximumRequestBytes: Int

    /// The limits: 64 KiB values and 64 MiB other bodies unless told otherwise.
    package init(maximumValueBytes: Int = 64 * 1024, maximumRequestBytes: Int = 64 * 1024 * 1024) {
        self.maximumValueBytes = maximumValueBytes
        self.maximumRequestBytes = maximumRequestBytes
    }

    /// The largest `PUT /v1/prefs/{key}` body read: a value at the limit, with room for JSON
    /// spelling it differently from the canonical form the limit counts.
    var maximumPutBodyBytes: Int { maximumValueBytes + 1024 }
}
