import PrefsEngine
import Prometheus

/// Every endpoint of the `/v1` API, in one table.
enum Endpoints {
    /// The endpoints, answering from `engine` within `limits`, with the metrics of `registry`.
    static func all(engine: any EngineServing, limits: ServerLimits, registry: PrometheusCollectorRegistry) -> [Endpoint] {
        PreferenceEndpoints.all(engine: engine, limits: limits) + HistoryEndpoints.all(engine: engine, limits: limits)
            + DraftEndpoints.all(service: engine, limits: limits) + TokenEndpoints.all(engine: engine, limits: limits)
            + [WatchEndpoint.endpoint(engine: engine), MetricsEndpoint.endpoint(engine: engine, registry: registry)]
    }
}
