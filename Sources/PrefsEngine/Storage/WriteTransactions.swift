/// How a write connection begins and commits a batch's transaction (``WriteConnection/transactions``):
/// each storage implements only the kind it runs, and is handed only what that kind uses.
package enum WriteTransactions {
    /// The database has one writer (SQLite, owned by one process): every transaction holds off
    /// any other, and nothing is committed under it.
    case exclusive(any ExclusiveTransactions)
    /// Other writers share the database (several hosts on PostgreSQL): a batch may run alongside
    /// theirs, and is committed after whatever they committed meanwhile.
    case shared(any SharedTransactions)
}
