/// A frame the upstream sends on a sync stream (`POST /v1/sync:stream`): the answer to the
/// exchange numbered ``id``, or the error that exchange got — the body `POST /v1/sync` would
/// have answered, with its error's code standing for the status. An error without an ``id``
/// ends the stream: a frame that could not be read, so nothing after it can be trusted.
package struct SyncStreamAnswer: Codable, Sendable {
    /// The exchange answered; nil for an error that ends the stream.
    package var id: Int64?
    /// The exchange's answer, if it succeeded.
    package var answer: SyncAnswer?
    /// Why it did not, if it failed.
    package var error: ErrorBody.Detail?

    /// The answer to exchange `id`.
    package init(id: Int64, answer: SyncAnswer) {
        self.id = id
        self.answer = answer
    }

    /// The error exchange `id` got; with no `id`, the error that ends the stream.
    package init(id: Int64?, error: PrefsError) {
        self.id = id
        self.error = ErrorBody(error).error
    }
}

extension SyncStreamAnswer {
    /// The error the frame carries, as the ``PrefsError`` it names (`unavailable` for a code
    /// this version does not know); nil for an answer.
    package var failure: PrefsError? {
        error.map { detail in
            PrefsError(
                PrefsError.Code(rawValue: detail.code) ?? .unavailable, detail.message, oldestRevision: detail.oldestRevision,
                newestRevision: detail.newestRevision, appliedRevision: detail.appliedRevision, lock: detail.lock)
        }
    }
}
