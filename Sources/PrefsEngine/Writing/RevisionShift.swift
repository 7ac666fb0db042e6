import PrefsKit

/// A batch's revisions moved up past changes other writers committed first (``CommitRebase``):
/// each revision after ``base`` — the batch's own — by ``shift``. What the batch had computed
/// with them (its key states, its events, the answers to its requests) moves with them.
struct RevisionShift: Sendable {
    /// The revision the batch worked from; those after it are the batch's own.
    var base: Revision
    /// How far they move.
    var shift: Revision

    /// `revision` moved, if it is one of the batch's.
    func callAsFunction(_ revision: Revision) -> Revision {
        revision > base ? revision + shift : revision
    }

    /// A request's answer with its revisions moved: only a ``WriteResult`` carries the store's
    /// revisions (a draft carries its own).
    func apply<T>(to value: T) -> T {
        guard var result = value as? WriteResult else { return value }
        result.revision = self(result.revision)
        result.revisions = result.revisions?.map { self($0) }
        return (result as? T) ?? value
    }
}

extension KeyState {
    /// The state with the batch's revisions moved. A state none of whose revisions is the
    /// batch's is returned as it is, and one that has some is mapped whole: no dictionary is
    /// copied and then searched scope by scope.
    func shifted(_ shift: RevisionShift) -> KeyState {
        var state = self
        if values.values.contains(where: { $0.revision > shift.base }) {
            state.values = values.mapValues { stored in
                var stored = stored
                stored.revision = shift(stored.revision)
                return stored
            }
        }
        if locks.values.contains(where: { $0 > shift.base }) {
            state.locks = locks.mapValues { shift($0) }
        }
        return state
    }
}

extension CommittedChange {
    /// The change with its revision, and those of the key's states around it, moved.
    func shifted(_ shift: RevisionShift) -> CommittedChange {
        var change = self
        change.event.revision = shift(event.revision)
        change.before = before?.shifted(shift)
        change.after = after?.shifted(shift)
        return change
    }
}
