/// A transaction's last write to a row (``PendingWrites``): the row as it is to be stored, or its
/// deletion.
enum RowWrite<Stored> {
    /// The row is stored so.
    case store(Stored)
    /// The row is deleted.
    case delete

    /// What is stored, nil for a deletion.
    var stored: Stored? {
        if case .store(let stored) = self { stored } else { nil }
    }

    /// Whether the row is deleted.
    var isDelete: Bool { stored == nil }
}
