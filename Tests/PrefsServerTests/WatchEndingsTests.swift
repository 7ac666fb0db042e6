import Synchronization
import Testing

@testable import PrefsServer

/// ``WatchEndings``: a stream ends when its connection's input closes or the connection does,
/// including when the client went away before the stream was registered.
@Suite struct WatchEndingsTests {
    /// Counts the calls of an `end`.
    final class Ends: Sendable {
        let count = Atomic(0)
        var end: @Sendable () -> Void { { self.count.add(1, ordering: .relaxed) } }
        var value: Int { count.load(ordering: .relaxed) }
    }

    final class Connection {}

    @Test func endsTheStreamOfAConnectionWhoseInputCloses() {
        let endings = WatchEndings()
        let (one, two) = (Connection(), Connection())
        let (first, second) = (Ends(), Ends())
        endings.register(first.end, on: ObjectIdentifier(one))
        endings.register(second.end, on: ObjectIdentifier(two))
        endings.inputClosed(ObjectIdentifier(one))
        #expect(first.value == 1)
        #expect(second.value == 0)
        endings.closed(ObjectIdentifier(two))
        #expect(second.value == 1)
        // Ended once only.
        endings.closed(ObjectIdentifier(one))
        #expect(first.value == 1)
    }

    @Test func aStreamRegisteredAfterItsClientLeftEndsAtOnce() {
        let endings = WatchEndings()
        let connection = Connection()
        endings.inputClosed(ObjectIdentifier(connection))
        let late = Ends()
        endings.register(late.end, on: ObjectIdentifier(connection))
        #expect(late.value == 1)
        // Once the connection is closed, nothing about it is remembered.
        endings.closed(ObjectIdentifier(connection))
        let next = Ends()
        endings.register(next.end, on: ObjectIdentifier(connection))
        #expect(next.value == 0)
    }

    @Test func aStreamThatEndedByItselfIsNotEndedAgain() {
        let endings = WatchEndings()
        let connection = Connection()
        let ends = Ends()
        endings.register(ends.end, on: ObjectIdentifier(connection))
        endings.remove(ObjectIdentifier(connection))
        endings.inputClosed(ObjectIdentifier(connection))
        #expect(ends.value == 0)
    }
}
