import Foundation
import PostgresNIO
import PrefsClient
import PrefsKit
import Synchronization
import TestHarness
import Testing

/// Registers under faults, on three hosts of one PostgreSQL database: twelve clients loop
/// *read a key → set a new value with `If-Match` of the revision read* on four keys while every
/// host's sessions are ended (`pg_terminate_backend`), a host is killed with `kill -9` and
/// restarted, and PostgreSQL itself crashes and comes back. Then, from the history every host's
/// watch replays: every acknowledged write is there once with its revision, no refused write took
/// effect, and each write that took effect was based on the revision just before it on its key.
@Suite("Compare-and-set under faults on several hosts", .enabled(if: PostgresTestDatabase.isEnabled), .timeLimit(.minutes(3)))
struct RegisterUnderFaultsTests {
    /// What a client was told of a write.
    enum Outcome: Sendable, Equatable {
        case done(Revision)
        /// Refused, or never sent: it must not have taken effect.
        case refused(PrefsError.Code)
        /// `outcome_unknown`: either may be true.
        case unknown
    }

    /// One write a client tried: a unique value, and the key's revision it was based on.
    struct Attempt: Sendable {
        var key: String
        var value: String
        var basedOn: Revision
        var outcome: Outcome
    }

    static let keys = ["reg.k0", "reg.k1", "reg.k2", "reg.k3"]

    /// Whether the clients go on, shared with their tasks.
    final class Running: Sendable {
        private let on = Atomic(true)
        var isOn: Bool { on.load(ordering: .relaxed) }
        func stop() { on.store(false, ordering: .relaxed) }
    }

    /// One client's compare-and-set loop through the host at `socket`, until `running` is
    /// cleared; each outcome is also told to `told`, which paces the faults.
    static func loop(
        client index: Int, socket: String, while running: Running, telling told: AsyncStream<Outcome>.Continuation
    ) async -> [Attempt] {
        let client = PrefsClient(transport: UnixSocketTransport(socketPath: socket, timeout: .seconds(20)), writeRetryDeadline: .seconds(20))
        var attempts: [Attempt] = []
        var round = 0
        while running.isOn {
            let key = keys[(index + round) % keys.count]
            let value = "c\(index)-\(round)"
            round += 1
            let basedOn: Revision
            do {
                let read = try await client.resolve(KeyName(key), scope: .root, explain: true)
                basedOn = read.chain?.first { $0.layer == .scope(.root) }?.revision ?? 0
            } catch {
                // Nothing was sent to write: a moment, and the next round.
                try? await Task.sleep(for: .milliseconds(20))
                continue
            }
            let outcome: Outcome
            do {
                outcome = .done(try await client.set(KeyName(key), to: .string(value), scope: .root, ifRevision: basedOn).revision)
            } catch let error as PrefsError where error.code == .outcomeUnknown {
                outcome = .unknown
            } catch let error as PrefsError {
                outcome = .refused(error.code)
            } catch {
                outcome = .refused(.internal)
            }
            attempts.append(Attempt(key: key, value: value, basedOn: basedOn, outcome: outcome))
            told.yield(outcome)
        }
        return attempts
    }

    /// Reads `outcomes` until `count` more of them satisfy `counted`; fails if the clients stop
    /// telling first.
    static func await(
        _ count: Int, of outcomes: inout AsyncStream<Outcome>.Iterator, where counted: (Outcome) -> Bool = { _ in true },
        _ what: String
    ) async throws {
        var seen = 0
        while seen < count {
            guard let outcome = await outcomes.next() else { throw PrefsError(.internal, "the clients stopped before \(what)") }
            if counted(outcome) { seen += 1 }
        }
    }

    /// Ends every session prefsd's hosts have with the database.
    static func terminateSessions(_ database: PostgresTestDatabase) async throws {
        try await database.connection { connection, logger in
            _ = try await connection.query(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()",
                logger: logger)
        }
    }

    /// The database's sessions as `pg_stat_activity` shows them — each one's client, state, what
    /// it waits for and for how long, and its statement — a line each, for a failure to report.
    static func sessions(_ database: PostgresTestDatabase) async -> String {
        do {
            return try await database.connection { connection, logger in
                var lines: [String] = []
                let rows = try await connection.query(
                    """
                    SELECT concat_ws(' | ', pid, application_name, state, wait_event_type, wait_event,
                        round(extract(epoch FROM now() - state_change)::numeric, 1) || ' s', left(query, 160))
                    FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()
                    """, logger: logger)
                for try await line in rows.decode(String.self) { lines.append(line) }
                return lines.joined(separator: "\n")
            }
        } catch {
            return "(not read: \(error))"
        }
    }

    @Test func everyOutcomeIsTrueUnderFaults() async throws {
        try await withOwnPostgresServer { server in
            let database = try await PostgresTestDatabase.create(on: server.url)
            var hosts: [Daemon] = []
            for _ in 0..<3 { hosts.append(try await Daemon(postgresURL: database.url)) }
            try await withCleanup {
                var initial: [String: Revision] = [:]
                for key in Self.keys { initial[key] = try await hosts[0].client.set(key, to: "start", scope: .root).revision }
                let start = try await hosts[0].client.status().revision
                let sockets = hosts.map(\.socketPath)
                let running = Running()
                let (told, telling) = AsyncStream<Outcome>.makeStream()

                // Each fault comes once the clients have got writes through since the last one:
                // paced by what they are told, not by the clock.
                let attempts = try await withThrowingTaskGroup(of: [Attempt].self) { group in
                    for index in 0..<12 {
                        group.addTask { await Self.loop(client: index, socket: sockets[index % 3], while: running, telling: telling) }
                    }
                    var outcomes = told.makeAsyncIterator()
                    let acknowledged: (Outcome) -> Bool = { if case .done = $0 { true } else { false } }
                    try await Self.await(150, of: &outcomes, where: acknowledged, "the first writes")
                    try await Self.terminateSessions(database)
                    try await Self.await(150, of: &outcomes, where: acknowledged, "writes after the sessions ended")
                    await hosts[2].kill()
                    try await hosts[2].start()
                    try await Self.await(150, of: &outcomes, where: acknowledged, "writes after the host came back")
                    try await server.pause()
                    try await Self.await(6, of: &outcomes, where: { if case .refused(.unavailable) = $0 { true } else { false } }, "refusals while PostgreSQL is away")
                    try await server.resume()
                    try await Self.await(150, of: &outcomes, where: acknowledged, "writes after PostgreSQL came back")
                    try await Self.terminateSessions(database)
                    try await Self.await(150, of: &outcomes, where: acknowledged, "writes after the sessions ended again")
                    running.stop()
                    telling.finish()
                    return try await group.reduce(into: []) { $0 += $1 }
                }

                // The history, as each host's watch replays it.
                var newest = try await hosts[0].client.status().revision
                for host in hosts { newest = max(newest, try await host.client.status().revision) }
                var histories: [[ChangeEvent]] = []
                for host in hosts {
                    // A host catching up after the faults may take longer than one bounded wait on
                    // a loaded machine: `behind` says to retry in a moment.
                    do {
                        try await waitUntil("host \(host.socketPath) takes in revision \(newest)") {
                            do {
                                try await host.client.waitForRevision(newest)
                                return true
                            } catch let error as PrefsError where error.code == .behind {
                                return false
                            }
                        }
                    } catch {
                        // Every host's state, not only this one's: the newest revision came from one
                        // of the others, and its log says how it got there.
                        var report = "host \(host.socketPath) did not take in \(newest)."
                        for other in hosts {
                            let applied = try? await other.client.status().revision
                            report += "\nhost \(other.socketPath) took in \(applied.map(String.init) ?? "?"); its standard error:\n\(other.standardError)"
                        }
                        report += "\nthe database's sessions:\n\(await Self.sessions(database))"
                        Issue.record(Comment(rawValue: report))
                        throw error
                    }
                    var events: [ChangeEvent] = []
                    if newest > start {
                        for try await event in host.client.watch(WatchRequest(prefixes: ["reg."], since: start)) where !event.kind.isNotice {
                            events.append(event)
                            if event.revision >= newest { break }
                        }
                    }
                    histories.append(events)
                }
                #expect(histories[1].map(\.revision) == histories[0].map(\.revision))
                #expect(histories[2].map(\.revision) == histories[0].map(\.revision))
                let history = histories[0]
                #expect(history.map(\.revision) == Array((start + 1)...max(start, newest)).filter { _ in newest > start })

                var byValue: [String: ChangeEvent] = [:]
                for event in history {
                    guard case .string(let value) = event.value else { continue }
                    #expect(byValue[value] == nil, "\(value) took effect twice")
                    byValue[value] = event
                }
                let done = attempts.filter { if case .done = $0.outcome { true } else { false } }
                #expect(done.count > 20, "the clients got writes through: \(done.count) of \(attempts.count)")
                for attempt in attempts {
                    let event = byValue[attempt.value]
                    switch attempt.outcome {
                    case .done(let revision):
                        #expect(event?.revision == revision && event?.key == attempt.key, "acknowledged \(attempt.value) at \(revision)")
                    case .refused(let code):
                        #expect(event == nil, "\(attempt.value) was refused (\(code)) yet took effect at \(event?.revision ?? 0)")
                    case .unknown:
                        break
                    }
                }
                // Each change of a key was based on the revision of the change before it.
                let basedOn = Dictionary(uniqueKeysWithValues: attempts.map { ($0.value, $0.basedOn) })
                var previous = initial
                for event in history {
                    guard let key = event.key, case .string(let value) = event.value else { continue }
                    #expect(basedOn[value] == previous[key], "\(value) at \(event.revision) was based on \(basedOn[value] ?? -1), not \(previous[key] ?? -1)")
                    previous[key] = event.revision
                }
            } cleanup: {
                for host in hosts { await host.stop() }
                await database.drop()
            }
        }
    }
}
