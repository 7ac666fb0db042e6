import Foundation

/// The history of a key's *effective* value at a scope: every change that made the value there
/// (or where it comes from) different — a write at the scope or above it, a lock or unlock, a new
/// schema default — newest first, each with who made it and why.
public struct PreferenceHistory: Sendable, Hashable, Codable {
    /// One change of the effective value.
    public struct Step: Sendable, Hashable, Codable {
        /// The change that made it.
        public var change: ChangeRecord
        /// The effective value after it.
        public var value: JSONValue
        /// Where that value came from after it (the layer that won).
        public var source: PreferenceSource
        /// The effective value before it; nil when there was none.
        public var previousValue: JSONValue?
        /// Where the value came from before it; nil for a change older than the log holds in
        /// full, kept because it set what is stored now.
        public var previousSource: PreferenceSource?

        /// A step.
        ///
        /// - Parameters:
        ///   - change: The change that made it.
        ///   - value: The effective value after it.
        ///   - source: Where that value came from.
        ///   - previousValue: The effective value before it.
        ///   - previousSource: Where that came from.
        public init(
            change: ChangeRecord, value: JSONValue, source: PreferenceSource, previousValue: JSONValue?,
            previousSource: PreferenceSource?
        ) {
            self.change = change
            self.value = value
            self.source = source
            self.previousValue = previousValue
            self.previousSource = previousSource
        }
    }

    /// The key.
    public var key: String
    /// The scope whose effective value this is.
    public var scope: ScopePath
    /// The value there now.
    public var current: ResolvedPreference
    /// The steps, newest first.
    public var steps: [Step]
    /// The oldest revision the change log holds in full.
    public var oldestRevision: Revision
    /// Where the next page starts (`before=`); nil after the last.
    public var next: Revision?

    /// A history.
    ///
    /// - Parameters:
    ///   - key: The key.
    ///   - scope: The scope.
    ///   - current: The value there now.
    ///   - steps: The steps, newest first.
    ///   - oldestRevision: The oldest revision the log holds in full.
    ///   - next: Where the next page starts.
    public init(
        key: String, scope: ScopePath, current: ResolvedPreference, steps: [Step], oldestRevision: Revision, next: Revision?
    ) {
        self.key = key
        self.scope = scope
        self.current = current
        self.steps = steps
        self.oldestRevision = oldestRevision
        self.next = next
    }
}

/// The effective values that differ at a scope between two revisions (`prefsctl diff`).
public struct PreferenceDiff: Sendable, Hashable, Codable {
    /// One key whose effective value differs.
    public struct Difference: Sendable, Hashable, Codable {
        /// The key.
        public var key: String
        /// Its effective value at ``PreferenceDiff/from``.
        public var before: ResolvedPreference
        /// Its effective value at ``PreferenceDiff/to``.
        public var after: ResolvedPreference
        /// The last change between the two that made the difference, with who made it.
        public var change: ChangeRecord?

        /// A difference.
        ///
        /// - Parameters:
        ///   - key: The key.
        ///   - before: Its effective value at the first revision.
        ///   - after: Its effective value at the second.
        ///   - change: The last change between them that made the difference.
        public init(key: String, before: ResolvedPreference, after: ResolvedPreference, change: ChangeRecord?) {
            self.key = key
            self.before = before
            self.after = after
            self.change = change
        }
    }

    /// The first revision.
    public var from: Revision
    /// The second revision.
    public var to: Revision
    /// The scope compared.
    public var scope: ScopePath
    /// The keys whose effective value differs, in key order.
    public var differences: [Difference]

    /// A diff.
    ///
    /// - Parameters:
    ///   - from: The first revision.
    ///   - to: The second revision.
    ///   - scope: The scope compared.
    ///   - differences: The keys whose effective value differs.
    public init(from: Revision, to: Revision, scope: ScopePath, differences: [Difference]) {
        self.from = from
        self.to = to
        self.scope = scope
        self.differences = differences
    }
}
