import PrefsKit
import TestHarness
import Testing

@Suite("Hybrid logical clocks")
struct HybridLogicalClockTests {
    @Test("Stamps follow physical time while it moves forward")
    func followsPhysicalTime() {
        var clock = HybridLogicalClock(device: "laptop")
        #expect(clock.stamp(now: 1_000) == SyncStamp(milliseconds: 1_000, counter: 0, device: "laptop"))
        #expect(clock.stamp(now: 1_005) == SyncStamp(milliseconds: 1_005, counter: 0, device: "laptop"))
    }

    @Test("Within one millisecond, or after the clock went back, the counter orders them")
    func counterOrders() {
        var clock = HybridLogicalClock(device: "laptop")
        let first = clock.stamp(now: 2_000)
        let same = clock.stamp(now: 2_000)
        let back = clock.stamp(now: 1_500)
        #expect(same == SyncStamp(milliseconds: 2_000, counter: 1, device: "laptop"))
        #expect(back == SyncStamp(milliseconds: 2_000, counter: 2, device: "laptop"))
        #expect(first < same && same < back)
    }

    @Test("A clock restarted after its stored stamp stamps later than it")
    func restartsAfterItsStoredStamp() {
        var clock = HybridLogicalClock(device: "laptop", after: SyncStamp(milliseconds: 9_000, counter: 4, device: "laptop"))
        #expect(clock.stamp(now: 100) == SyncStamp(milliseconds: 9_000, counter: 5, device: "laptop"))
    }

    @Test("After taking in a stamp from a clock ahead, every stamp is later than it")
    func receiveMovesPast() {
        var clock = HybridLogicalClock(device: "desktop")
        _ = clock.stamp(now: 1_000)
        let ahead = SyncStamp(milliseconds: 50_000, counter: 7, device: "phone")
        clock.receive(ahead, now: 1_001)
        let next = clock.stamp(now: 1_002)
        #expect(next > ahead)
        #expect(next.milliseconds == 50_000)
    }

    /// Whatever the physical clock does, stamps only grow, and each is later than every stamp
    /// taken in before it: causality, on seeded random schedules (a failing seed is printed).
    @Test("Stamps grow and follow every stamp seen, on random schedules", arguments: 0..<200)
    func monotonicOnRandomSchedules(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var clock = HybridLogicalClock(device: "d\(seed % 3)")
        var physical: Int64 = 1_000_000
        var latestSeen: SyncStamp?
        var previous: SyncStamp?
        for _ in 0..<100 {
            physical += Int64(random.next() % 20) - 8            // forward, and sometimes back
            if random.next() % 3 == 0 {
                let seen = SyncStamp(
                    milliseconds: physical + Int64(random.next() % 100) - 50, counter: UInt32(random.next() % 4),
                    device: "other")
                clock.receive(seen, now: physical)
                latestSeen = max(latestSeen ?? seen, seen)
            } else {
                let stamp = clock.stamp(now: physical)
                if let previous { #expect(stamp > previous, "seed \(seed)") }
                if let latestSeen { #expect(stamp > latestSeen, "seed \(seed)") }
                #expect(stamp.milliseconds >= physical, "seed \(seed)")
                previous = stamp
            }
        }
    }

    @Test("A stamp ahead of the upstream's limit is clamped to it; one within it is kept")
    func clamping() {
        let stamp = SyncStamp(milliseconds: 90_000, counter: 3, device: "phone")
        #expect(stamp.clamped(toAtMost: 100_000) == stamp)
        #expect(stamp.clamped(toAtMost: 60_000) == SyncStamp(milliseconds: 60_000, counter: 3, device: "phone"))
    }

    @Test("Stamps order by time, then counter, then device name")
    func order() {
        let stamps = [
            SyncStamp(milliseconds: 2, counter: 0, device: "a"), SyncStamp(milliseconds: 1, counter: 5, device: "z"),
            SyncStamp(milliseconds: 1, counter: 5, device: "b"), SyncStamp(milliseconds: 1, counter: 0, device: "z"),
        ]
        #expect(stamps.sorted().map(\.description) == ["1.0@z", "1.5@b", "1.5@z", "2.0@a"])
    }
}
