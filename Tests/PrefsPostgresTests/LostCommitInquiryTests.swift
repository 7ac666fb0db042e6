import Foundation
import Logging
import PostgresNIO
import PrefsKit
@testable import PrefsPostgres
import TestHarness
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The writer's waits on the engine's clock, with no PostgreSQL server: a wait ends at the
/// first of its endings, an alarm rings when the clock is moved to it, and a lost commit's
/// inquiry that cannot reach PostgreSQL pauses on the clock and answers `outcome_unknown` at its
/// deadline — with the clock moved by the test, not waited for.
@Suite("PostgreSQL writer: waits on the injected clock", .timeLimit(.minutes(1)))
struct LostCommitInquiryTests {
    @Test("A wait ends with the first of its endings; later ones change nothing")
    func aWaitEndsWithTheFirstEnding() throws {
        let wait = ThreadWait<Int>()
        wait.end(.success(1))
        wait.end(.failure(CancellationError()))
        #expect(try wait.outcomeOnceEnded() == 1)
    }

    @Test("A thread waiting for an alarm is woken when the clock is moved to it, not before")
    func anAlarmRingsWhenTheClockGetsThere() async throws {
        let clock = ManualClock()
        let alarm = ClockAlarm(clock: clock, at: clock.now.advanced(by: .seconds(30)))
        let woken = try await withCheckedThrowingContinuation { (woken: CheckedContinuation<Bool, any Error>) in
            Thread {
                alarm.waitForRing()
                woken.resume(returning: alarm.hasRung)
            }.start()
            Task {
                let end = await clock.firstEnd(ofSleeps: 1, endingBy: clock.now.advanced(by: .seconds(30)))
                #expect(!alarm.hasRung)
                clock.advance(to: end)
            }
        }
        #expect(woken)
    }

    /// A loopback port that refuses connections: bound, never listening.
    final class RefusingPort {
        let descriptor: Int32
        let port: Int

        init() throws {
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                    bind(descriptor, address, length) == 0 && getsockname(descriptor, address, &length) == 0
                }
            }
            guard bound else {
                close(descriptor)
                throw PrefsError(.internal, "no loopback port: errno \(errno)")
            }
            self.descriptor = descriptor
            port = Int(UInt16(bigEndian: address.sin_port))
        }

        deinit { close(descriptor) }
    }

    @Test("A lost commit whose PostgreSQL refuses every connection pauses on the clock between attempts, and is outcome_unknown at its deadline")
    func anUnreachableDatabaseIsOutcomeUnknownAtTheDeadline() async throws {
        let refusing = try RefusingPort()
        let port = refusing.port
        let clock = ManualClock()
        let deadline = clock.now.advanced(by: .seconds(1))
        let answered = Task {
            try await Self.onThread {
                let logger = Logger(label: "prefsd-tests")
                let link = WriterLink(
                    location: try PostgresLocation(url: "postgresql://prefs@127.0.0.1:\(port)/prefs"),
                    configuration: .init(host: "127.0.0.1", port: port, username: "prefs", password: nil, database: "prefs", tls: .disable),
                    clock: clock, logger: logger)
                let inquiry = LostCommitInquiry(link: link, logger: logger, batchID: "batch", within: .seconds(1))
                return try inquiry.outcome(start: 10, newestRevision: 12).moved
            }
        }
        var pauses = 0
        // Each attempt is refused at once, then pauses: once the pause's sleep and the deadline's
        // are under way, the test moves the clock to the first end — the pause's, the last of
        // which ends at the deadline.
        while clock.now < deadline {
            clock.advance(to: await clock.firstEnd(ofSleeps: 2, endingBy: deadline))
            pauses += 1
        }
        let error = await #expect(throws: PrefsError.self) { try await answered.value }
        #expect(error?.code == .outcomeUnknown)
        #expect(pauses == 10, "one attempt every 100 ms of the clock")
        withExtendedLifetime(refusing) {}
    }

    /// Runs the blocking `body` on a thread of its own, off the concurrency pool.
    static func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try body() }) }.start()
        }
    }
}
