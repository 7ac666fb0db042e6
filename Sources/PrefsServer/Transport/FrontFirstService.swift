import ServiceLifecycle

/// A server (Hummingbird's `Application`) whose connections are answered at the front first
/// (``FrontFirstChannel``): when it is cancelled, the connections whose task waits for the front
/// handler end too (``WaitingConnections``).
package struct FrontFirstService<Server: Service>: Service {
    /// The server itself.
    package let server: Server
    let waiting: WaitingConnections

    package func run() async throws {
        try await withTaskCancellationHandler {
            try await server.run()
        } onCancel: {
            waiting.cancel()
        }
    }
}
