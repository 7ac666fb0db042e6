import Foundation
import PrefsEngine
import PrefsKit
import PrefsStore
import TestHarness
import Testing

/// Sync under faults, schedule after schedule: each seed runs a random schedule of offline
/// writes, lost, repeated, late and reordered messages, partitions, restarts, compaction past
/// cursors and a late-joining device, then heals the network and checks what must hold.
///
/// `PREFSD_SYNC_SEEDS=N` runs N schedules (CI runs thousands); `PREFSD_SYNC_SEED=S` replays one,
/// printing its trace.
@Suite("Sync simulation")
struct SyncSimulationTests {
    static var seeds: [UInt64] {
        let environment = ProcessInfo.processInfo.environment
        if let seed = environment["PREFSD_SYNC_SEED"].flatMap(UInt64.init) { return [seed] }
        let count = environment["PREFSD_SYNC_SEEDS"].flatMap(Int.init) ?? 60
        return Self.foundFailing + (1...UInt64(count)).map { $0 &* 0x9E37_79B9 }
    }

    /// Seeds that once failed, each kept for good once its bug was fixed: a replica that was not
    /// sent its own reset back, and a late answer's value that came back over a reset.
    static let foundFailing: [UInt64] = [514_960_539_186, 3_880_785_094_278]

    @Test("every schedule converges, and nothing acknowledged is lost or applied twice")
    func schedulesConverge() async throws {
        let replaying = ProcessInfo.processInfo.environment["PREFSD_SYNC_SEED"] != nil
        var totals = (writes: 0, conflicts: 0, refused: 0, duplicates: 0, resnapshots: 0)
        defer {
            print(
                "Sync simulation: \(Self.seeds.count) schedules, \(totals.writes) acknowledged writes, "
                    + "\(totals.conflicts) conflicts resolved, \(totals.refused) refused, \(totals.duplicates) duplicates answered, "
                    + "\(totals.resnapshots) snapshots after compaction")
        }
        for seed in Self.seeds {
            let simulation = try SyncSimulation(seed: seed)
            var violations: [String] = []
            do {
                try await simulation.start()
                try await simulation.run(steps: 220)
                try await simulation.heal()
                violations = try await Self.violations(in: simulation)
                let results = simulation.outcomes.values.joined()
                totals.writes += simulation.acknowledged.count
                totals.conflicts += results.filter { $0.outcome == .resolved }.count
                totals.refused += results.filter { $0.outcome == .refused }.count
                totals.duplicates += results.filter { $0.outcome == .duplicate }.count
                totals.resnapshots += simulation.resnapshots
            } catch {
                violations = ["the schedule failed: \(error)"]
            }
            if replaying || !violations.isEmpty {
                print(simulation.trace.joined(separator: "\n"))
            }
            await simulation.close()
            #expect(violations.isEmpty, "seed \(seed) (replay: PREFSD_SYNC_SEED=\(seed)): \(violations.joined(separator: "; "))")
            if !violations.isEmpty { return }
        }
    }

    /// What does not hold once the network has healed.
    static func violations(in simulation: SyncSimulation) async throws -> [String] {
        var violations: [String] = []
        let upstream = simulation.upstream!
        // Every replica's effective values equal the upstream's, at every scope within reach.
        for device in simulation.devices {
            guard let store = device.store else { continue }
            for scope in SyncSimulation.checkedScopes {
                for key in SyncSimulation.schemas.keys.sorted() {
                    let here = try await store.resolve(try KeyName(key), scope: scope, explain: false)
                    let there = try await upstream.resolve(try KeyName(key), scope: scope, explain: false)
                    if here.value != there.value || here.source != there.source {
                        violations.append(
                            "\(device.name) has \(key)@\(scope.path) = \(here.value.canonicalText) (\(here.source)), "
                                + "the upstream \(there.value.canonicalText) (\(there.source))")
                    }
                }
            }
            let status = store.replicaStatus
            if status?.outbox != 0 { violations.append("\(device.name) still has \(status?.outbox ?? -1) changes to push") }
        }
        // Every acknowledged write reached the upstream once: applied, or kept as a loser.
        let conflicts = try await upstream.conflicts(ConflictQuery(limit: 1_000_000))
        let byRevision = Dictionary(conflicts.map { ($0.revision, $0) }, uniquingKeysWith: { first, _ in first })
        for write in simulation.acknowledged {
            let results = simulation.outcomes["\(write.device)#\(write.seq)"] ?? []
            let takenIn = results.filter { $0.outcome != .duplicate }
            guard takenIn.count == 1, let result = takenIn.first else {
                violations.append("\(write.device)#\(write.seq) was taken in \(takenIn.count) times")
                continue
            }
            guard let revision = result.conflict else { continue }
            guard let conflict = byRevision[revision] else {
                violations.append("\(write.device)#\(write.seq) names conflict \(revision), which is not recorded")
                continue
            }
            let lost = conflict.losers.contains { $0.device == write.device && $0.sequence == write.seq }
            let won = conflict.winner.value == write.value
            if !lost && !won {
                violations.append("\(write.device)#\(write.seq) neither won nor is kept as a loser of conflict \(revision)")
            }
        }
        return violations
    }

    @Test("a fresh replica joining a full upstream changes nothing there")
    func freshReplicaChangesNothing() async throws {
        let simulation = try SyncSimulation(seed: 7)
        try await simulation.start()
        try await simulation.run(steps: 120)
        try await simulation.heal()
        let fresh = try await simulation.addDevice()
        let before = try await simulation.upstream.dump(scope: "/")
        let revision = simulation.upstream.committedRevision
        try await simulation.exchangeUntilInStep(fresh)
        #expect(simulation.upstream.committedRevision == revision)
        #expect(try await simulation.upstream.dump(scope: "/") == before)
        #expect(try await Self.violations(in: simulation).isEmpty)
        await simulation.close()
    }
}
