import PrefsEngine
import Prometheus

/// Every endpoint of the `/v1` API, in one table.
enum Endpoints {
    /// The endpoints, answering from `engine` within `limits`, with the metrics of `registry`, and
    /// OFREP's flags as `ofrep` says.
    static func all(
        engine: any EngineServing, limits: ServerLimits, ofrep: OFREPSettings, registry: PrometheusCollectorRegistry
    ) -> [Endpoint] {
        PreferenceEndpoints.all(engine: engine, limits: limits) + HistoryEndpoints.all(engine: engine, limits: limits)
            + DraftEndpoints.all(service: engine, limits: limits) + TokenEndpoints.all(engine: engine, limits: limits)
            + [WatchEndpoint.endpoint(engine: engine), MetricsEndpoint.endpoint(engine: engine, registry: registry)]
            + OFREPEndpoints.all(engine: engine, settings: ofrep, limits: limits)
    }
}
