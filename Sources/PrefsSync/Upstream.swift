import PrefsEngine
import PrefsKit
import PrefsStore

/// Where an embedded replica syncs to: an upstream prefsd's URL (its `--listen`, `http://` or
/// `https://`), and the secret of the named token the device syncs as.
///
/// ```swift
/// let store = try EmbeddedStore(
///     path: "/var/lib/myapp/prefs.sqlite",
///     upstream: Upstream(url: "https://prefs.example.com:8443", token: secret))
/// ```
public struct Upstream: Sendable {
    /// The upstream's URL.
    public var url: String
    /// The secret of the device's named token at the upstream.
    public var token: String
    /// A file of CA certificates (PEM) to verify an `https://` upstream against, instead of the
    /// system's trust store.
    public var caFile: String?

    /// An upstream.
    public init(url: String, token: String, caFile: String? = nil) {
        self.url = url
        self.token = token
        self.caFile = caFile
    }
}

extension PrefsEngine where Storage == SQLiteStorage {
    /// An embedded store that is a replica of `upstream`: reads, writes and watches are local and
    /// work offline; its changes are pushed, and the upstream's pulled, in the background until
    /// it closes — the same replica as `prefsd --upstream`'s.
    ///
    /// - Throws: ``PrefsError`` as ``init(path:configuration:)`` does, and `invalid_request` for
    ///   an upstream URL that is not `http://` or `https://`, an empty token, or a CA file that
    ///   cannot be read.
    public convenience init(path: String, configuration: StoreConfiguration = StoreConfiguration(), upstream: Upstream) throws {
        // Checked before the store opens; the transport, which holds connections, made only once
        // it has, so that a store that fails to open leaves no client to shut down.
        let settings = try HTTPUpstream.Settings(url: upstream.url, token: upstream.token, caFile: upstream.caFile)
        var configuration = configuration
        configuration.upstream = settings.url
        try self.init(path: path, configuration: configuration)
        startSync(through: HTTPUpstream(settings))
    }
}
