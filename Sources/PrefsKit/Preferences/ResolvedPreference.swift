import Foundation

/// A key's effective value at a scope, where it came from, and (when explained) every layer.
public struct ResolvedPreference: Codable, Sendable, Hashable {
    /// The key.
    public var key: String
    /// The scope it was resolved at.
    public var scope: ScopePath
    /// The effective value; `null` when the source is `none`.
    public var value: JSONValue
    /// Where the value came from.
    public var source: PreferenceSource
    /// The store's revision when this was read: a watch started `since` it misses nothing.
    public var revision: Revision
    /// With `explain`: every layer consulted, first to last (override, lock, each scope from the
    /// resolved one up to `/`, default).
    public var chain: [ChainLayer]?

    /// A resolution with every field given.
    ///
    /// - Parameters:
    ///   - key: The key.
    ///   - scope: The scope it was resolved at.
    ///   - value: The effective value; `null` when the source is `none`.
    ///   - source: Where the value came from.
    ///   - revision: The store's revision when this was read.
    ///   - chain: Every layer consulted, first to last, for an explained resolution.
    public init(
        key: String, scope: ScopePath, value: JSONValue, source: PreferenceSource, revision: Revision,
        chain: [ChainLayer]? = nil
    ) {
        self.key = key
        self.scope = scope
        self.value = value
        self.source = source
        self.revision = revision
        self.chain = chain
    }

    /// Whether the key has a value here at all (`source` is not `none`).
    public var isSet: Bool { source != .none }
}

extension ResolvedPreference {
    /// The wire JSON of a resolution without a chain, written directly, the same as
    /// `WireJSON` would encode it: a valid key, a scope and a source hold only characters JSON
    /// needs no escape for, and the value is already canonical JSON — so the hottest answer of
    /// the daemon needs no encoder. Nil when there is a chain to explain.
    public var compactWireJSON: String? {
        guard chain == nil else { return nil }
        return #"{"key":"\#(key)","revision":\#(revision),"scope":"\#(scope.path)","source":"\#(source)","value":\#(value.canonicalText)}"#
    }

    /// Reads what ``compactWireJSON`` writes, without a decoder: for a one-shot `prefsctl get`,
    /// a `JSONDecoder`'s first use costs more than the whole request. Nil for any other text
    /// (an explained answer, other spacing or order), which a decoder must read.
    ///
    /// - Parameter bytes: The JSON text, as UTF-8 bytes.
    public init?(compactWireJSON bytes: Data) {
        var rest = bytes[...]
        /// The text up to the next `"`, which the writer never escapes in these members.
        func quoted(after prefix: String) -> String? {
            guard rest.starts(with: prefix.utf8) else { return nil }
            rest = rest.dropFirst(prefix.utf8.count)
            guard let end = rest.firstIndex(of: UInt8(ascii: "\"")) else { return nil }
            defer { rest = rest[rest.index(after: end)...] }
            return String(decoding: rest[..<end], as: UTF8.self)
        }
        guard let key = quoted(after: #"{"key":""#), rest.starts(with: #","revision":"#.utf8) else { return nil }
        rest = rest.dropFirst(#","revision":"#.utf8.count)
        let digits = rest.prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
        rest = rest.dropFirst(digits.count)
        guard let revision = Revision(String(decoding: digits, as: UTF8.self)),
            let scopeText = quoted(after: #","scope":""#), let scope = try? ScopePath(scopeText),
            let sourceText = quoted(after: #","source":""#), let source = try? PreferenceSource(sourceText),
            rest.starts(with: #","value":"#.utf8), rest.last == UInt8(ascii: "}"),
            let value = try? JSONValue(parsing: Array(rest.dropFirst(#","value":"#.utf8.count).dropLast()))
        else { return nil }
        self.init(key: key, scope: scope, value: value, source: source, revision: revision)
    }
}
