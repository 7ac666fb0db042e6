import CoreMetrics
import HTTPTypes
import Synchronization

/// Requests counted by endpoint and status, with their latency: `prefsd_requests_total` and the
/// histogram `prefsd_request_duration_seconds`, labelled `endpoint` (its method and path
/// template, such as `GET /v1/prefs/{key}`, or `none` for a request no endpoint takes) and
/// `status`.
///
/// Each endpoint × status pair gets its handles the first time it is answered, and finds them
/// again by two array indexes: counting a request builds no string, looks nothing up by name,
/// allocates nothing, and takes one short lock besides the handles' own atomics.
final class RequestMetrics: Sendable {
    /// The statuses the API answers with, each with its slot; any other is counted as `other`.
    private static let statuses = [200, 201, 304, 400, 401, 403, 404, 405, 409, 410, 412, 413, 422, 429, 500, 503, 507]

    /// One endpoint × status pair's handles.
    private struct Handles: Sendable {
        let requests: Counter
        let duration: Timer
    }

    /// The endpoints' names by index; the last is `none`.
    private let endpoints: [String]
    private let factory: any MetricsFactory
    /// By endpoint index × (statuses + 1), made on first use.
    private let handles: Mutex<[Handles?]>

    /// The index that counts requests no endpoint takes.
    var unrouted: Int { endpoints.count - 1 }

    /// Metrics for `endpoints` (their names, by the index requests are recorded under), made by
    /// `factory`.
    init(endpoints: [String], factory: any MetricsFactory) {
        self.endpoints = endpoints + ["none"]
        self.factory = factory
        handles = Mutex(Array(repeating: nil, count: self.endpoints.count * (Self.statuses.count + 1)))
    }

    /// The name of the endpoint at `index`.
    func name(of index: Int) -> String {
        endpoints[index]
    }

    /// Counts a request of the endpoint at `index`, answered with `status`, received at `start`.
    func record(_ index: Int, _ status: HTTPResponse.Status, since start: ContinuousClock.Instant) {
        let elapsed = ContinuousClock.now - start
        let slot = index * (Self.statuses.count + 1) + (Self.statuses.firstIndex(of: status.code) ?? Self.statuses.count)
        let handles = handles.withLock { $0[slot] } ?? makeHandles(slot: slot, index: index, status: status)
        handles.requests.increment()
        let (seconds, attoseconds) = elapsed.components
        handles.duration.recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }

    /// Makes the handles of `slot` once (another thread may have just made them).
    private func makeHandles(slot: Int, index: Int, status: HTTPResponse.Status) -> Handles {
        let code = Self.statuses.contains(status.code) ? String(status.code) : "other"
        let dimensions = [("endpoint", endpoints[index]), ("status", code)]
        return handles.withLock { handles in
            if let made = handles[slot] { return made }
            let made = Handles(
                requests: Counter(label: "prefsd_requests_total", dimensions: dimensions, factory: factory),
                duration: Timer(label: "prefsd_request_duration_seconds", dimensions: dimensions, factory: factory))
            handles[slot] = made
            return made
        }
    }
}
