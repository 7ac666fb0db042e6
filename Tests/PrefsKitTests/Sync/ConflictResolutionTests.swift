import PrefsKit
import Testing

@Suite("Conflict resolution by merge rule")
struct ConflictResolutionTests {
    static let earlier = SyncStamp(milliseconds: 1_000, counter: 0, device: "desktop")
    static let later = SyncStamp(milliseconds: 2_000, counter: 0, device: "laptop")

    private func resolve(
        _ rule: MergeRule, base: JSONValue? = nil, upstream: JSONValue?, at upstreamStamp: SyncStamp = earlier,
        device: JSONValue?, at deviceStamp: SyncStamp = later
    ) -> ConflictResolution {
        ConflictResolution(
            rule, base: base, upstream: .init(value: upstream, stamp: upstreamStamp), device: .init(value: device, stamp: deviceStamp))
    }

    @Test("lww: the later stamp wins, whichever side it is; the other is the loser")
    func lastWriterWins() {
        let deviceLater = resolve(.lww, upstream: 14, device: 16)
        #expect(deviceLater.value == 16)
        #expect(deviceLater.outcome == .device)
        #expect(deviceLater.upstreamLost && !deviceLater.deviceLost)

        let upstreamLater = resolve(.lww, upstream: 14, at: Self.later, device: 16, at: Self.earlier)
        #expect(upstreamLater.value == 14)
        #expect(upstreamLater.outcome == .upstream)
        #expect(upstreamLater.deviceLost && !upstreamLater.upstreamLost)
    }

    @Test("lww: a tie in time and counter goes to the device name that sorts last")
    func tiesByDevice() {
        let stamp = { (device: String) in SyncStamp(milliseconds: 5, counter: 1, device: device) }
        #expect(resolve(.lww, upstream: 1, at: stamp("a"), device: 2, at: stamp("b")).value == 2)
        #expect(resolve(.lww, upstream: 1, at: stamp("b"), device: 2, at: stamp("a")).value == 1)
    }

    @Test("lww: a later reset wins over a value, and the value is the loser")
    func resetByStamp() {
        let reset = resolve(.lww, upstream: 14, device: nil)
        #expect(reset.value == nil)
        #expect(reset.outcome == .device)
        #expect(reset.upstreamLost)
    }

    @Test("max and min: the number decides, not the stamp; a value beats a reset")
    func extremes() {
        #expect(resolve(.max, upstream: 20, at: Self.earlier, device: 16, at: Self.later).value == 20)
        #expect(resolve(.min, upstream: 20, at: Self.earlier, device: 16, at: Self.later).value == 16)
        #expect(resolve(.max, upstream: 2.5, device: 3).value == 3)
        #expect(resolve(.min, upstream: nil, device: 3).value == 3)
        #expect(resolve(.max, upstream: 7, device: nil).value == 7)
        let equal = resolve(.max, upstream: 7, device: 7)
        #expect(equal.value == 7 && !equal.upstreamLost && !equal.deviceLost)
    }

    @Test("upstream: the upstream's value stays; the device's change is the loser")
    func upstreamStays() {
        let kept = resolve(.upstream, upstream: "dark", device: "light")
        #expect(kept.value == "dark")
        #expect(kept.outcome == .upstream)
        #expect(kept.deviceLost)
    }

    @Test("union: both sides' additions and removals since the base are kept")
    func unionAsSets() {
        let merged = resolve(.union, base: ["a", "b", "c"], upstream: ["a", "b", "c", "d"], device: ["a", "c", "e"])
        // upstream added d; the device removed b and added e.
        #expect(merged.value == ["a", "c", "d", "e"])
        #expect(merged.outcome == .merged)
        #expect(merged.upstreamLost && merged.deviceLost)
    }

    @Test("union: a side that removed what the other kept removes it; one that added what the other removed keeps it")
    func unionRemovals() {
        #expect(resolve(.union, base: ["a"], upstream: ["a"], device: []).value == [])
        #expect(resolve(.union, base: ["a"], upstream: [], device: ["a", "b"]).value == ["b"])
        #expect(resolve(.union, base: nil, upstream: ["x"], device: ["y", "x"]).value == ["x", "y"])
        #expect(resolve(.union, base: ["a"], upstream: nil, device: ["a"]).value == nil, "a reset removes what the base had")
    }

    @Test("The same value on both sides is no loss, by any rule")
    func sameValueLosesNothing() {
        for rule in MergeRule.allCases {
            let same = resolve(rule, base: ["z"], upstream: ["q"], device: ["q"])
            #expect(same.value == ["q"], "\(rule)")
            #expect(!same.upstreamLost && !same.deviceLost, "\(rule)")
        }
    }
}
