@_exported import PrefsClientCore

extension PrefsClient {
    /// A client over AsyncHTTPClient (pooled keep-alive connections): for applications.
    public convenience init(socketPath: String) {
        self.init(transport: AsyncHTTPClientTransport(socketPath: socketPath))
    }
}
