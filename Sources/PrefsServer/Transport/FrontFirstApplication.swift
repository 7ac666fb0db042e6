import Hummingbird
import ServiceLifecycle

/// A Hummingbird application whose connections are answered at the front first
/// (``FrontFirstChannel``), and the request loops of those that stepped aside: run it as a
/// service (it stops gracefully with its ServiceGroup, as the application does) or on its own.
///
/// The loops run in a task group of their own, beside the application rather than in its server's
/// tasks: a connection answered at the front holds no task (``FrontFirstConnections``). Stopped
/// gracefully, the application closes every connection before it returns, the loops' too;
/// cancelled, the loops are cancelled (each closes its client's side, as in Hummingbird's server),
/// and the connections answered at the front are closed before this returns.
package struct FrontFirstApplication: Service {
    /// The application, whose server's connections are ``connections``'.
    let application: Application<HummingbirdResponder>
    /// Its server's connections.
    let connections: FrontFirstConnections

    /// Runs the application and its connections' request loops until it stops.
    package func run() async throws {
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask {
                do {
                    try await application.run()
                } catch {
                    await connections.finish()
                    throw error
                }
                await connections.finish()
            }
            for await requestLoop in connections.requestLoops {
                group.addTask { await requestLoop() }
            }
        }
    }
}
