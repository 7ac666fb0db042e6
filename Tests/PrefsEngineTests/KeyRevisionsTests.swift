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
}
