/// A frame a replica sends on a sync stream (`POST /v1/sync:stream`): one exchange, numbered so
/// that its answer can be told from the others' — the exchanges of one stream run side by side
/// (a push is not held up behind a long poll) and are answered as each finishes.
package struct SyncStreamRequest: Codable, Sendable, Hashable {
    /// The replica's number for the exchange, unique within the stream.
    package var id: Int64
    /// The exchange, as `POST /v1/sync` takes it.
    package var request: SyncRequest

    /// Exchange `request`, numbered `id`.
    package init(id: Int64, request: SyncRequest) {
        self.id = id
        self.request = request
    }

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case id, request
    }

    /// Decodes a frame as strictly as every request body: both fields, nothing else.
    package init(from decoder: any Decoder) throws {
        try StrictFields.check(decoder, allowed: CodingKeys.allCases.map(\.stringValue), in: "a sync stream's frame")
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(Int64.self, forKey: .id)
        request = try container.decode(SyncRequest.self, forKey: .request)
    }
}
