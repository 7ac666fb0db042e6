import PrefsEngine

/// Every endpoint of the `/v1` API, in one table.
enum Endpoints {
    /// The endpoints, answering from `engine` within `limits`.
    static func all(engine: any EngineServing, limits: ServerLimits) -> [Endpoint] {
        PreferenceEndpoints.all(engine: engine, limits: limits) + DraftEndpoints.all(service: engine, limits: limits)
            + [WatchEndpoint.endpoint(engine: engine)]
    }
}
