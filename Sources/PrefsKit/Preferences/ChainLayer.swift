import Foundation

/// One layer of an explained resolution: what that layer holds, if anything.
public struct ChainLayer: Codable, Sendable, Hashable {
    /// Which layer: `override`, `lock:/path`, `scope:/path` or `default`.
    public var layer: PreferenceSource
    /// The value this layer holds; absent when it holds none.
    public var value: JSONValue?
    /// The revision that set the value, for stored layers.
    public var revision: Revision?

    /// A layer with what it holds.
    ///
    /// - Parameters:
    ///   - layer: Which layer it is.
    ///   - value: The value it holds, or nil when it holds none.
    ///   - revision: The revision that set the value, for stored layers.
    public init(layer: PreferenceSource, value: JSONValue?, revision: Revision?) {
        self.layer = layer
        self.value = value
        self.revision = revision
    }
}
