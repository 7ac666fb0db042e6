import PrefsEngine
import PrefsKit
import Testing

/// The key index on its own: what the rebuild reads and what the intake adds make one list per
/// key, read by range; compaction's dropped rows leave it, its kept ones stay.
@Suite("Engine: the key index")
struct KeyRevisionsTests {
    /// An index opened at revision 4, whose rebuild read `a` at 1 and 3 (3 a schema) and `b` at 2.
    private static func indexAtFour() -> KeyRevisions {
        let index = KeyRevisions(start: 4)
        var rebuild = KeyRevisions.Rebuild()
        rebuild.add([
            KeyedRevision(key: "a", revision: 1, isSchema: false), KeyedRevision(key: "b", revision: 2, isSchema: false),
            KeyedRevision(key: "a", revision: 3, isSchema: true),
        ])
        #expect(rebuild.revision == 3)
        index.complete(with: rebuild)
        return index
    }

    @Test("Until its rebuild is done the index says nothing; then what was read and what came after are one list")
    func rebuildAndIntake() {
        let index = KeyRevisions(start: 4)
        index.add([ChangeEvent(revision: 5, kind: .set, key: "a"), ChangeEvent(revision: 6, kind: .draftCreated, draft: "d")])
        #expect(index.revisions(of: "a", after: 0, through: .max) == nil)
        var rebuild = KeyRevisions.Rebuild()
        rebuild.add([KeyedRevision(key: "a", revision: 1, isSchema: false), KeyedRevision(key: "b", revision: 4, isSchema: false)])
        index.complete(with: rebuild)
        #expect(index.revisions(of: "a", after: 0, through: .max) == [1, 5])
        #expect(index.revisions(of: "a", after: 1, through: 5) == [5])
        #expect(index.revisions(of: "a", after: 0, through: 4) == [1])
        #expect(index.revisions(of: "b", after: 0, through: .max) == [4])
        #expect(index.revisions(of: "nobody", after: 0, through: .max) == [])
    }

    @Test("Compaction's dropped revisions leave the index; those that set what is stored now, or the schema, stay")
    func compaction() {
        let index = Self.indexAtFour()
        index.add([ChangeEvent(revision: 5, kind: .set, key: "b"), ChangeEvent(revision: 6, kind: .set, key: "a")])
        // The log now starts at 5: `a`'s value is 6's and its schema 3's; `b`'s value is 5's.
        var a = KeyState()
        a.values[.root] = StoredValue(value: 1, revision: 6)
        index.dropCompacted(before: 5, stored: ["a": a])
        #expect(index.revisions(of: "a", after: 0, through: .max) == [3, 6])
        #expect(index.revisions(of: "b", after: 0, through: .max) == [5])
        // A lock's revision is kept too.
        var locked = KeyState()
        locked.locks[.root] = 5
        index.dropCompacted(before: 7, stored: ["b": locked])
        #expect(index.revisions(of: "b", after: 0, through: .max) == [5])
        #expect(index.revisions(of: "a", after: 0, through: .max) == [3])
    }

    @Test("What another host's compaction kept below the log's start is put back, in order and once; not past what was taken in, nor after a newer compaction")
    func restoreWhatCompactionKept() {
        let incomplete = KeyRevisions(start: 4)
        #expect(!incomplete.restore([KeyedRevision(key: "a", revision: 1, isSchema: false)], below: 0, through: 4))
        let index = Self.indexAtFour()
        index.add([ChangeEvent(revision: 5, kind: .set, key: "a"), ChangeEvent(revision: 6, kind: .set, key: "b")])
        // The cache said `a`'s value is 5's: its 1 was forgotten, which that compaction kept.
        var a = KeyState()
        a.values[.root] = StoredValue(value: 1, revision: 5)
        index.dropCompacted(before: 5, stored: ["a": a])
        #expect(index.revisions(of: "a", after: 0, through: .max) == [3, 5])
        #expect(index.revisions(of: "b", after: 0, through: .max) == [6])
        let kept = [
            KeyedRevision(key: "a", revision: 1, isSchema: false), KeyedRevision(key: "b", revision: 2, isSchema: false),
            KeyedRevision(key: "a", revision: 3, isSchema: true),
        ]
        // Read for an older start: a newer compaction came since, and may have dropped them.
        #expect(!index.restore(kept, below: 4, through: 6))
        #expect(index.restore(kept, below: 5, through: 6))
        #expect(index.revisions(of: "a", after: 0, through: .max) == [1, 3, 5])
        #expect(index.revisions(of: "b", after: 0, through: .max) == [2, 6])
        // Put back once, however often read; nothing at or past the start, or past what was taken in.
        #expect(index.restore(kept + [KeyedRevision(key: "c", revision: 5, isSchema: false)], below: 5, through: 6))
        #expect(index.restore([KeyedRevision(key: "d", revision: 4, isSchema: false)], below: 5, through: 3))
        #expect(index.revisions(of: "a", after: 0, through: .max) == [1, 3, 5])
        #expect(index.revisions(of: "c", after: 0, through: .max) == [])
        #expect(index.revisions(of: "d", after: 0, through: .max) == [])
    }
}
