import HTTPTypes
import NIOCore
import PrefsEngine
import PrefsKit
import Prometheus

/// `GET /v1/metrics`: every metric of `registry` in Prometheus' text format, each family with its
/// `# HELP` line (``MetricHelp``), the engine's gauges brought up to date first. For admins at `/`:
/// the metrics count every scope's requests.
enum MetricsEndpoint {
    /// The endpoint, reading `registry` and refreshing `engine`'s gauges.
    static func endpoint(engine: any EngineServing, registry: PrometheusCollectorRegistry) -> Endpoint {
        Endpoint(.get, "/v1/metrics", role: .admin, storeWide: true) { _ in
            .task {
                await engine.refreshMetrics()
                return Answer(
                    status: .ok, fields: [HTTPField(name: .contentType, value: "text/plain; version=0.0.4; charset=utf-8")],
                    body: .whole(ByteBuffer(bytes: MetricHelp.adding(to: registry.emitToBuffer()))))
            }
        }
    }
}
