import Foundation

/// The `Idempotency-Key`s ``PrefsClient`` gives its writes: version 7 UUIDs (RFC 9562), whose
/// first 48 bits are the time in milliseconds since 1970 and whose other 74 (bar the version and
/// the variant) are random.
///
/// The daemon keeps every key it is sent, for a day, in a B-tree index written in the same
/// transaction as the write. Random keys (version 4) fall each on a page of that index of its own,
/// which the commit then writes to the WAL and syncs: one more page a write. Keys that begin with
/// the time fall together at the index's end, so a batch of writes shares one or two of its pages,
/// as PostgreSQL users pick version 7 UUIDs for their primary keys. Nothing depends on the order:
/// a key of any shape works, and two clients' clocks need not agree.
package enum IdempotencyKey {
    /// A new key, made at `date`: its text is the UUID's, upper-case as `UUID.uuidString`.
    package static func make(at date: Date = Date()) -> String {
        let milliseconds = UInt64(max(0, date.timeIntervalSince1970 * 1000))
        var uuid = UUID().uuid  // version 4: random but for its version and variant bits
        uuid.0 = UInt8(truncatingIfNeeded: milliseconds >> 40)
        uuid.1 = UInt8(truncatingIfNeeded: milliseconds >> 32)
        uuid.2 = UInt8(truncatingIfNeeded: milliseconds >> 24)
        uuid.3 = UInt8(truncatingIfNeeded: milliseconds >> 16)
        uuid.4 = UInt8(truncatingIfNeeded: milliseconds >> 8)
        uuid.5 = UInt8(truncatingIfNeeded: milliseconds)
        uuid.6 = 0x70 | (uuid.6 & 0x0F)  // version 7; the variant (byte 8) stays RFC 9562's
        return UUID(uuid: uuid).uuidString
    }
}
