@_exported import PrefsClientCore

extension PrefsClient {
    /// A client of the daemon listening on `socketPath`, over keep-alive connections
    /// (``PrefsClientCore/UnixSocketTransport``): what an application uses all day.
    ///
    /// - Parameter socketPath: The path of the daemon's Unix socket.
    public convenience init(socketPath: String) {
        self.init(transport: UnixSocketTransport(socketPath: socketPath))
    }
}
