import PrefsEngine
import Prometheus

/// Every endpoint of the API — `/v1`, OFREP's, the console's — in one table.
enum Endpoints {
    /// The endpoints, answering from `engine` within `limits`, with the metrics of `registry`,
    /// OFREP's flags as `ofrep` says, and `console`'s files and sign-in.
    static func all(
        engine: any EngineServing, limits: ServerLimits, ofrep: OFREPSettings, console: Console, registry: PrometheusCollectorRegistry
    ) -> [Endpoint] {
        PreferenceEndpoints.all(engine: engine, limits: limits) + HistoryEndpoints.all(engine: engine, limits: limits)
            + DraftEndpoints.all(engine: engine, limits: limits) + BlobEndpoints.all(engine: engine)
            + TokenEndpoints.all(engine: engine, limits: limits)
            + SyncEndpoints.all(engine: engine, limits: limits)
            + [WatchEndpoint.endpoint(engine: engine), MetricsEndpoint.endpoint(engine: engine, registry: registry)]
            + OFREPEndpoints.all(engine: engine, settings: ofrep, limits: limits)
            + ConsoleEndpoints.all(engine: engine, console: console, limits: limits)
    }
}
