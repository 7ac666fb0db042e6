import Foundation
import PrefsEngine
import PrefsKit
import PrefsStore

/// A key for the read benchmark.
struct BenchFontSizeKey: PreferenceKey {
    static let name = "bench.fontSize"
    static let defaultValue = 14
}

extension PreferenceValues {
    var benchFontSize: Int {
        get { self[BenchFontSizeKey.self] }
        set { self[BenchFontSizeKey.self] = newValue }
    }
}

/// The in-process read paths: an embedded store's resolve, a wrapper read, a context read.
enum ReadCost {
    /// Median nanoseconds per read of each path, in batches of `batch` reads.
    static func medians(batches: Int = 200, batch: Int = 5000) async throws -> (resolve: Double, wrapper: Double, context: Double) {
        let store = try EmbeddedStore.temporary()
        try await store.set(\.benchFontSize, 16, scope: "/accounts/alice")
        let medians = try await withPrefs(store, scope: "/accounts/alice/threads/1") {
            let wrapper = PreferenceObserving(\.benchFontSize)
            let context = try PrefsContext.required
            precondition(wrapper.wrappedValue == 16 && context[\.benchFontSize] == 16)
            let scope: ScopePath = "/accounts/alice/threads/1"  // as an app holds it: parsed once
            let key = try KeyName("bench.fontSize")
            let resolve = median(batches, batch) { _ = store.resolveNow(key, scope: scope) }
            let wrapped = median(batches, batch) { _ = wrapper.wrappedValue }
            let contextual = median(batches, batch) { _ = context[\.benchFontSize] }
            return (resolve, wrapped, contextual)
        }
        await store.close()
        return medians
    }

    private static func median(_ batches: Int, _ batch: Int, _ read: () -> Void) -> Double {
        var samples: [Double] = []
        for _ in 0..<batches {
            let start = ContinuousClock.now
            for _ in 0..<batch { read() }
            samples.append((ContinuousClock.now - start).seconds * 1e9 / Double(batch))
        }
        samples.sort()
        return samples[samples.count / 2]
    }
}
