@testable import PrefsPostgres
import TestHarness
import Testing

/// The lost-commit recovery's state machine, without a database or a socket: each branch of what
/// became of a batch whose connection was lost as it committed, on a clock the test moves.
@Suite("PostgreSQL writer: the lost-commit recovery")
struct LostCommitRecoveryTests {
    typealias Recovery = LostCommitRecovery<ManualClock.Instant>

    /// A recovery of a batch that worked on revision 10 and wrote through 12, lost at `clock`'s
    /// now: 30 s to find out, 100 ms between attempts.
    static func recovery(_ clock: ManualClock) -> Recovery {
        Recovery(lostAt: clock.now, within: .seconds(30), pause: .milliseconds(100), start: 10, newestRevision: 12)
    }

    @Test("Committed: the fence finds the batch's id with its revision; the batch committed where it meant to")
    func committed() {
        var recovery = Self.recovery(ManualClock())
        #expect(recovery.step == .fence)
        recovery.fenced(inserted: false)
        #expect(recovery.step == .readRevision)
        recovery.revisionRead(12)
        #expect(recovery.step == .finished(.committed(moved: 0)))
    }

    @Test("Committed after other hosts: their changes are read, and the batch's revisions move past them")
    func committedAfterOthers() {
        var recovery = Self.recovery(ManualClock())
        recovery.fenced(inserted: false)
        recovery.revisionRead(15)
        #expect(recovery.step == .readCommittedBefore(after: 10, through: 13))
        recovery.committedBeforeRead()
        #expect(recovery.step == .finished(.committed(moved: 3)))
    }

    @Test("Fenced: the fence inserted the id, or found one an earlier attempt's fence inserted — the batch did not commit")
    func fenced() {
        var inserted = Self.recovery(ManualClock())
        inserted.fenced(inserted: true)
        #expect(inserted.step == .finished(.notCommitted))

        var fencedBefore = Self.recovery(ManualClock())
        fencedBefore.fenced(inserted: false)
        fencedBefore.revisionRead(nil)
        #expect(fencedBefore.step == .finished(.notCommitted))
    }

    @Test("Unreachable until the deadline: an attempt every 100 ms of the clock, the last pause ending at the deadline, then unknown")
    func unreachableUntilTheDeadline() {
        let clock = ManualClock()
        var recovery = Self.recovery(clock)
        var attempts = 0
        while recovery.step == .fence {
            attempts += 1
            recovery.connectionFailed(at: clock.now)
            guard case .pause(let until) = recovery.step else { break }
            #expect(until <= recovery.deadline)
            clock.advance(to: until)
            recovery.pauseEnded(at: clock.now)
        }
        #expect(recovery.step == .finished(.unknown))
        #expect(attempts == 300)
        #expect(clock.now == recovery.deadline)
    }

    @Test("An attempt that fails after the deadline gives up at once, with no pause")
    func aFailureAfterTheDeadlineGivesUp() {
        let clock = ManualClock()
        var recovery = Self.recovery(clock)
        clock.advance(by: .seconds(31))
        recovery.connectionFailed(at: clock.now)
        #expect(recovery.step == .finished(.unknown))
    }

    @Test("A reconnect that fails, then succeeds: the batch's fate is found on the next attempt, reading what others committed first")
    func aReconnectFailsThenSucceeds() {
        let clock = ManualClock()
        var recovery = Self.recovery(clock)
        recovery.connectionFailed(at: clock.now)
        #expect(recovery.step == .pause(until: clock.now.advanced(by: .milliseconds(100))))
        clock.advance(by: .milliseconds(100))
        recovery.pauseEnded(at: clock.now)
        #expect(recovery.step == .fence)
        recovery.fenced(inserted: false)
        // Lost again as it read the revision: another pause, another fence (which finds the id).
        recovery.connectionFailed(at: clock.now)
        clock.advance(by: .milliseconds(100))
        recovery.pauseEnded(at: clock.now)
        #expect(recovery.step == .fence)
        recovery.fenced(inserted: false)
        recovery.revisionRead(14)
        #expect(recovery.step == .readCommittedBefore(after: 10, through: 12))
        recovery.committedBeforeRead()
        #expect(recovery.step == .finished(.committed(moved: 2)))
    }
}
