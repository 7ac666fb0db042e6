import Hummingbird
import ServiceLifecycle

/// A Hummingbird application whose connections are answered at the front first
/// (``FrontFirstChannel``), and the request loops of those that stepped aside: run it as a
/// service (it stops gracefully with its ServiceGroup, as the application does) or on its own.
///
/// The loops run in a task group of their own, beside the application rather than in its server's
/// tasks: a connection answered at the front holds no task (``FrontFirstConnections``). Either
/// way this returns only once every connection has closed. Stopped gracefully, each connection is
/// asked to finish, and closes once it has; cancelled, the loops are cancelled (each closes its
/// client's side, as in Hummingbird's server), and the client's side of the connections answered
/// at the front is closed.
package struct FrontFirstApplication: Service {
    /// The application, whose server's connections are ``connections``'.
    let application: Application<HummingbirdResponder>
    /// Its server's connections.
    let connections: FrontFirstConnections
    /// The gate the application waits at before it starts listening, if any: it does not start
    /// if the gate closes instead of opening, and waits for its group to stop it.
    let startsAfter: StartGate?
    /// The gate the application closes once it stops, if any (its server opens it once
    /// listening): one waiting at it is never left waiting.
    let closesWhenDone: StartGate?

    /// Runs the application and its connections' request loops until it stops.
    package func run() async throws {
        defer { closesWhenDone?.close() }
        if let startsAfter, try await !startsAfter.wait() {
            // The listener it waited for stopped without listening, and its error is ending the
            // group. Returning now would race that error to the group as a service that ended by
            // itself (`serviceFinishedUnexpectedly`, instead of the reason): this waits for the
            // group to stop it instead.
            try await gracefulShutdown()
            return
        }
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask {
                do {
                    try await application.run()
                } catch {
                    await connections.finish(closing: true)
                    throw error
                }
                // Hummingbird's server returns as soon as it stops accepting: its tasks for these
                // connections have ended long before. Stopped gracefully, it has asked each to
                // finish (`ChannelShouldQuiesceEvent`); cancelled, now or while they finish, they
                // are closed.
                await connections.finish(closing: false)
            }
            for await requestLoop in connections.requestLoops {
                group.addTask { await requestLoop() }
            }
        }
    }
}
