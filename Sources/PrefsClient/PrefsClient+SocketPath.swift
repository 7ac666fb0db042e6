@_exported import PrefsClientCore

extension PrefsClient {
    /// A client of the daemon listening on `socketPath`, over keep-alive connections
    /// (``PrefsClientCore/UnixSocketTransport``): what an application uses all day.
    ///
    /// - Parameters:
    ///   - socketPath: The path of the daemon's Unix socket.
    ///   - userAgent: What the client's writes say sent them (`User-Agent`), which the change log
    ///     records beside the program's name; `PrefsClient/VERSION` by default.
    public convenience init(socketPath: String, userAgent: String = PrefsClient.defaultUserAgent) {
        self.init(transport: UnixSocketTransport(socketPath: socketPath), userAgent: userAgent)
    }
}
