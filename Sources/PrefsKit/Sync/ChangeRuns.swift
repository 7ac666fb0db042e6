/// One side of a difference: which elements of a sequence changed (were removed from the old
/// one, or inserted into the new), in runs between the elements both sides share — and the
/// normalisation `git`'s diff (xdiff's `xdl_change_compact`) makes of them.
///
/// A run of changes next to equal elements can be slid over them and stay the same change:
/// removing the second of `a a` is removing the first. Each run is slid as far up, then as far
/// down, as equal elements allow (merging with the runs it meets), and then back up to end
/// where the other side has changes too, if it passed such a place, so that a removal and an
/// insertion meet as one replacement.
struct ChangeRuns<Element: Equatable> {
    let elements: [Element]
    var changed: [Bool]

    /// No element of `elements` changed yet.
    init(_ elements: [Element]) {
        self.elements = elements
        changed = [Bool](repeating: false, count: elements.count)
    }

    /// A run of changed elements, `start..<end`, possibly empty: there is one between every two
    /// unchanged elements, and the two sides of a difference have as many.
    struct Run {
        var start: Int
        var end: Int
        var isEmpty: Bool { start == end }
    }

    /// The first run.
    func first() -> Run {
        var run = Run(start: 0, end: 0)
        while run.end < changed.count, changed[run.end] { run.end += 1 }
        return run
    }

    /// The run after `run`; nil after the last.
    func next(after run: Run) -> Run? {
        guard run.end < changed.count else { return nil }
        var next = Run(start: run.end + 1, end: run.end + 1)
        while next.end < changed.count, changed[next.end] { next.end += 1 }
        return next
    }

    /// The run before `run`; nil before the first.
    func previous(before run: Run) -> Run? {
        guard run.start > 0 else { return nil }
        var previous = Run(start: run.start - 1, end: run.start - 1)
        while previous.start > 0, changed[previous.start - 1] { previous.start -= 1 }
        return previous
    }

    /// Slides `run` one element down, if the element after it equals its first (taking in the
    /// run it then meets); false if it cannot.
    mutating func slideDown(_ run: inout Run) -> Bool {
        guard run.end < changed.count, elements[run.start] == elements[run.end] else { return false }
        changed[run.start] = false
        changed[run.end] = true
        run.start += 1
        run.end += 1
        while run.end < changed.count, changed[run.end] { run.end += 1 }
        return true
    }

    /// Slides `run` one element up, if the element before it equals its last (taking in the run
    /// it then meets); false if it cannot.
    mutating func slideUp(_ run: inout Run) -> Bool {
        guard run.start > 0, elements[run.start - 1] == elements[run.end - 1] else { return false }
        run.start -= 1
        run.end -= 1
        changed[run.start] = true
        changed[run.end] = false
        while run.start > 0, changed[run.start - 1] { run.start -= 1 }
        return true
    }

    /// Normalises the runs as `git` does, `other` being the other side of the difference.
    mutating func compact(against other: ChangeRuns) {
        var run = first()
        var otherRun = other.first()
        while true {
            if !run.isEmpty {
                var endMatchingOther: Int?
                var earliestEnd: Int
                var size: Int
                repeat {
                    size = run.end - run.start
                    endMatchingOther = nil
                    while slideUp(&run) { otherRun = other.previous(before: otherRun)! }
                    earliestEnd = run.end
                    if !otherRun.isEmpty { endMatchingOther = run.end }
                    while slideDown(&run) {
                        otherRun = other.next(after: otherRun)!
                        if !otherRun.isEmpty { endMatchingOther = run.end }
                    }
                } while size != run.end - run.start
                if run.end != earliestEnd, endMatchingOther != nil {
                    while otherRun.isEmpty {
                        _ = slideUp(&run)
                        otherRun = other.previous(before: otherRun)!
                    }
                }
            }
            guard let nextRun = next(after: run), let nextOther = other.next(after: otherRun) else { return }
            (run, otherRun) = (nextRun, nextOther)
        }
    }
}
