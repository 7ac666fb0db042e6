/// Where the writer's connection stands in a batch's transaction, and what it must send next:
/// the state ``PostgresWriteConnection`` keeps, as explicit states whose transitions say which
/// statements to send — so it is tested without a database.
struct WriterTransaction {
    /// The batch's transaction on the server.
    enum State: Equatable {
        /// Not open: statements run on their own (an optimistic batch that has written nothing
        /// at once yet, or between batches).
        case notOpen
        /// Open: `BEGIN` was sent.
        case open
        /// Open, but a statement failed outside a savepoint: the transaction can only roll back.
        case failed
        /// Lost with its connection (or ended after it failed): the batch cannot go on.
        case lost
    }

    /// The request in progress, as its savepoint goes.
    enum Savepoint: Equatable {
        /// No request is in progress.
        case outsideRequest
        /// A request is in progress and has written nothing at once: undoing it is forgetting its
        /// pending writes.
        case notSent
        /// A request is in progress and `SAVEPOINT` was sent before a row it wrote at once.
        case sent
    }

    /// A statement the connection sends for the transaction.
    enum Statement: String, Equatable {
        case begin = "BEGIN"
        /// Takes the revision counter (``PostgresWriteConnection``'s batches take it before any
        /// row lock).
        case lockCounter = "SELECT 1 FROM change_log_state WHERE id = 1 FOR UPDATE"
        case savepoint = "SAVEPOINT request"
        case releaseSavepoint = "RELEASE SAVEPOINT request"
        case rollbackToSavepoint = "ROLLBACK TO SAVEPOINT request"
        case commit = "COMMIT"
        case rollback = "ROLLBACK"
    }

    private(set) var state = State.notOpen
    private(set) var savepoint = Savepoint.outsideRequest
    /// Whether the batch began without the revision counter (it takes it as it commits).
    private(set) var optimistic = false

    /// Whether a transaction is open on the server (`BEGIN` sent, no `COMMIT` or `ROLLBACK` yet).
    var isOpen: Bool { state == .open || state == .failed }

    /// Whether a statement may be sent for the batch: no statement failed outside a savepoint and
    /// the connection was not lost, and an open transaction's connection is still open.
    ///
    /// - Parameter connectionClosed: Whether the connection has closed (or there is none).
    func isUsable(connectionClosed: Bool) -> Bool {
        state == .notOpen || (state == .open && !connectionClosed)
    }

    /// A batch begins: a failure or loss of the batch before is forgotten.
    ///
    /// - Parameter optimistic: Whether the batch runs without the revision counter.
    mutating func batchBegins(optimistic: Bool) {
        self.optimistic = optimistic
        savepoint = .outsideRequest
        state = isOpen ? .open : .notOpen
    }

    /// What to send before a statement that writes a row at once (or, for a batch that is not
    /// optimistic, before `prefsd_begin` locks the counter), in order: `BEGIN` if no transaction
    /// is open; `SAVEPOINT` inside a request that has sent none.
    ///
    /// An optimistic batch, opening its transaction for a row it writes at once, takes the
    /// revision counter right after `BEGIN`: a batch that holds row locks always took the counter
    /// before them, as one that runs again after a conflict does, so two hosts' batches never wait
    /// on each other in a circle (a deadlock PostgreSQL would break only after a second).
    func beforeWrite() -> [Statement] {
        let opening: [Statement] = isOpen ? [] : optimistic ? [.begin, .lockCounter] : [.begin]
        return opening + (savepoint == .notSent ? [.savepoint] : [])
    }

    /// `statement` succeeded.
    mutating func sent(_ statement: Statement) {
        switch statement {
        case .begin:
            state = state == .lost ? .failed : .open
        case .commit, .rollback:
            // A transaction that had failed leaves the batch unable to go on until the next.
            state = state == .failed || state == .lost ? .lost : .notOpen
        case .savepoint:
            savepoint = .sent
        case .lockCounter, .releaseSavepoint, .rollbackToSavepoint:
            break
        }
    }

    /// A statement failed: inside an open transaction and outside a savepoint sent, that dooms the
    /// transaction (a savepoint keeps it: rolling back to it).
    mutating func statementFailed() {
        if state == .open && savepoint != .sent { state = .failed }
    }

    /// A request begins, in a savepoint not sent yet.
    mutating func requestBegins() {
        savepoint = .notSent
    }

    /// What ends the request's savepoint on the server: released if the request succeeded,
    /// rolled back to and released if it failed — nothing if it was never sent.
    ///
    /// - Parameter succeeded: Whether the request succeeded.
    func requestEnds(succeeded: Bool) -> [Statement] {
        guard savepoint == .sent else { return [] }
        return succeeded ? [.releaseSavepoint] : [.rollbackToSavepoint, .releaseSavepoint]
    }

    /// The request is over (its savepoint's end sent, or not).
    mutating func requestEnded() {
        savepoint = .outsideRequest
    }

    /// A statement needs a connection and there is none open.
    ///
    /// - Returns: Whether a new one may be made; false inside a transaction, which is then lost:
    ///   the rest of it would run outside one, on the new connection.
    mutating func needsConnection() -> Bool {
        guard isOpen else { return true }
        state = .lost
        return false
    }

    /// The connection was closed: a transaction open on it is gone.
    mutating func connectionClosed() {
        state = state == .failed ? .lost : state == .open ? .notOpen : state
    }

    /// A new connection replaces one that was lost, for a statement sent again or for finding
    /// out what became of a commit: nothing of the batch's transaction remains.
    mutating func reconnected() {
        state = .notOpen
    }
}
