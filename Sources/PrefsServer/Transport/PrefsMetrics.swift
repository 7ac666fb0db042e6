import Prometheus

/// How prefsd keeps its metrics for `GET /v1/metrics`: in a Prometheus registry, through a
/// swift-metrics factory whose histograms have buckets fitting what they measure (requests and
/// commits take microseconds to milliseconds; batches carry 1 to hundreds of requests).
///
/// Give the same factory to the engine (``StoreConfiguration/metricsFactory``) and the server
/// (``PrefsHTTPServer``), so that one scrape shows both; a daemon may also make it the
/// process's `MetricsSystem`, once, at start.
package enum PrefsMetrics {
    /// A factory that keeps what it makes in `registry` (by default, a registry of its own).
    package static func factory(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) -> PrometheusMetricsFactory {
        var factory = PrometheusMetricsFactory(registry: registry)
        let latencies: [Duration] = [
            .microseconds(25), .microseconds(50), .microseconds(100), .microseconds(250), .microseconds(500),
            .milliseconds(1), .microseconds(2500), .milliseconds(5), .milliseconds(10), .milliseconds(25),
            .milliseconds(50), .milliseconds(100), .milliseconds(250), .seconds(1), .seconds(5),
        ]
        factory.durationHistogramBuckets = ["prefsd_request_duration_seconds": latencies, "prefsd_commit_seconds": latencies]
        factory.valueHistogramBuckets = ["prefsd_commit_batch_requests": [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]]
        return factory
    }
}
