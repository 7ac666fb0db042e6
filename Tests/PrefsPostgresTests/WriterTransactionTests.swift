@testable import PrefsPostgres
import Testing

/// The writer connection's transaction state machine, without a database: which statements each
/// step sends, and when the batch can no longer go on.
@Suite("PostgreSQL writer: the transaction state machine")
struct WriterTransactionTests {
    @Test("An optimistic batch sends nothing until a row is written at once: then BEGIN, the counter, and the request's savepoint")
    func anOptimisticBatchOpensItsTransactionForARowWrittenAtOnce() {
        var transaction = WriterTransaction()
        transaction.batchBegins(optimistic: true)
        #expect(!transaction.isOpen)
        transaction.requestBegins()
        #expect(transaction.requestEnds(succeeded: true) == [], "a request that wrote nothing at once sent no savepoint")
        #expect(transaction.beforeWrite() == [.begin, .lockCounter, .savepoint])
        for statement in transaction.beforeWrite() { transaction.sent(statement) }
        #expect(transaction.state == .open)
        #expect(transaction.savepoint == .sent)
        #expect(transaction.beforeWrite() == [], "the next row of the request needs nothing more")
        #expect(transaction.requestEnds(succeeded: true) == [.releaseSavepoint])
        #expect(transaction.requestEnds(succeeded: false) == [.rollbackToSavepoint, .releaseSavepoint])
        transaction.requestEnded()
        transaction.requestBegins()
        #expect(transaction.beforeWrite() == [.savepoint], "the next request's first row")
        transaction.requestEnded()
        transaction.sent(.commit)
        #expect(transaction.state == .notOpen)
    }

    @Test("A batch that holds the others off sends BEGIN alone: prefsd_begin takes the counter")
    func aBatchHoldingOthersOffBegins() {
        var transaction = WriterTransaction()
        transaction.batchBegins(optimistic: false)
        #expect(transaction.beforeWrite() == [.begin])
        transaction.sent(.begin)
        #expect(transaction.isOpen)
        #expect(transaction.isUsable(connectionClosed: false))
        #expect(!transaction.isUsable(connectionClosed: true), "its connection closed under it")
    }

    @Test("A statement that fails outside a savepoint dooms the transaction; inside one, it does not")
    func aFailureOutsideASavepointDoomsTheTransaction() {
        var transaction = WriterTransaction()
        transaction.batchBegins(optimistic: true)
        transaction.requestBegins()
        for statement in transaction.beforeWrite() { transaction.sent(statement) }
        transaction.statementFailed()
        #expect(transaction.state == .open, "rolled back to the savepoint")
        transaction.requestEnded()
        transaction.statementFailed()
        #expect(transaction.state == .failed)
        #expect(!transaction.isUsable(connectionClosed: false))
        transaction.sent(.rollback)
        transaction.batchBegins(optimistic: true)
        #expect(transaction.state == .notOpen, "the next batch starts afresh")
        #expect(transaction.isUsable(connectionClosed: true), "no transaction: a new connection will be made")
    }

    @Test("Outside a transaction a failed statement leaves nothing behind")
    func aFailureOutsideATransactionLeavesNothing() {
        var transaction = WriterTransaction()
        transaction.batchBegins(optimistic: true)
        transaction.statementFailed()
        #expect(transaction.state == .notOpen)
    }

    @Test("A connection lost inside a transaction loses the batch: no new connection for it, until it is reconnected to find out")
    func aConnectionLostInATransactionLosesTheBatch() {
        var transaction = WriterTransaction()
        transaction.batchBegins(optimistic: false)
        transaction.sent(.begin)
        let mayConnect = transaction.needsConnection()
        #expect(!mayConnect)
        #expect(transaction.state == .lost)
        #expect(!transaction.isUsable(connectionClosed: true))
        transaction.connectionClosed()
        #expect(transaction.state == .lost)
        transaction.reconnected()
        #expect(transaction.state == .notOpen)
        let mayConnectNow = transaction.needsConnection()
        #expect(mayConnectNow, "outside a transaction a new connection may be made")
    }

    @Test("Closing the connection ends an open transaction; one that had failed stays lost until the next batch")
    func closingEndsTheTransaction() {
        var open = WriterTransaction()
        open.batchBegins(optimistic: false)
        open.sent(.begin)
        open.connectionClosed()
        #expect(open.state == .notOpen)

        var failed = WriterTransaction()
        failed.batchBegins(optimistic: false)
        failed.sent(.begin)
        failed.statementFailed()
        failed.connectionClosed()
        #expect(failed.state == .lost)
        failed.batchBegins(optimistic: true)
        #expect(failed.state == .notOpen)
    }
}
