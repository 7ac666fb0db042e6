import PrefsKit

/// How the OFREP endpoints read flags (`prefsd --ofrep-scope`, `--ofrep-prefix`).
package struct OFREPSettings: Sendable {
    /// How an evaluation context becomes a scope.
    package var scopeTemplate: ScopeTemplate
    /// The keys a bulk evaluation answers: those starting with this; every key without it.
    package var prefix: String?
    /// The least polling interval the configuration endpoint asks clients for, in milliseconds.
    package var minimumPollingMilliseconds: Int

    /// Settings; by default the context's `scope` attribute names the scope, bulk evaluations
    /// answer every key, and clients poll at most once a second.
    package init(scopeTemplate: ScopeTemplate = .contextScope, prefix: String? = nil, minimumPollingMilliseconds: Int = 1000) {
        self.scopeTemplate = scopeTemplate
        self.prefix = prefix
        self.minimumPollingMilliseconds = minimumPollingMilliseconds
    }
}
