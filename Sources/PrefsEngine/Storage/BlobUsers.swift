/// Who a stored blob is of, for deciding who may read it by its hash: the accounts whose drafts
/// have an attachment of it, and the uploaders that sent it through `PATCH /v1/blobs/{sha256}`.
package struct BlobUsers: Sendable, Equatable {
    /// The accounts with a draft that has an attachment of the blob.
    package var accounts: Set<String>
    /// The uploaders (named tokens' names; `""` for the socket's owner and the file token) that
    /// sent it.
    package var uploaders: Set<String>

    /// The users of a blob.
    package init(accounts: Set<String> = [], uploaders: Set<String> = []) {
        self.accounts = accounts
        self.uploaders = uploaders
    }
}
