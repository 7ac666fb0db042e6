import CoreMetrics
import HTTPTypes
import Synchronization

/// Requests on the TCP listener counted by the token they carried and what came of them:
/// `prefsd_token_requests_total`, labelled `token` (its name — `default` for the file token,
/// `none` for a request without a token the listener accepts; never a secret) and `outcome`
/// (`allowed`, `forbidden` for a 403, `unauthorized` for a 401).
final class TokenMetrics: Sendable {
    private let factory: any MetricsFactory
    /// The counters made so far, by token name and outcome.
    private let counters = Mutex<[String: [Counter?]]>([:])

    private static let outcomes = ["allowed", "forbidden", "unauthorized"]

    /// Counters made by `factory`.
    init(factory: any MetricsFactory) {
        self.factory = factory
    }

    /// Counts a request carrying the token named `token` (nil: none accepted), answered with
    /// `status`.
    func record(_ token: String?, _ status: HTTPResponse.Status) {
        let outcome = token == nil ? 2 : status == .forbidden ? 1 : 0
        let name = token ?? "none"
        let counter = counters.withLock { $0[name]?[outcome] } ?? make(name, outcome)
        counter.increment()
    }

    /// Makes the counter of `name` and `outcome` once (another thread may have just made it).
    private func make(_ name: String, _ outcome: Int) -> Counter {
        counters.withLock { counters in
            if let made = counters[name]?[outcome] { return made }
            let made = Counter(
                label: "prefsd_token_requests_total", dimensions: [("token", name), ("outcome", Self.outcomes[outcome])],
                factory: factory)
            counters[name, default: Array(repeating: nil, count: Self.outcomes.count)][outcome] = made
            return made
        }
    }
}
