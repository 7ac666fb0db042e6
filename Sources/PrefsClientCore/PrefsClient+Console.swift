import Foundation
import PrefsKit

/// The console, over the daemon's API (`/v1/ui/links`).
extension PrefsClient {
    /// A sign-in link to the daemon's console, for a session with `role` at `scope` — each, when
    /// nil, the caller's own (the socket's owner: an admin at `/`). The link works once, for two
    /// minutes; `not_found` when the daemon has no TCP listener to serve the console on.
    public func consoleLink(role: AccessRole? = nil, scope: ScopePath? = nil) async throws -> ConsoleLink {
        try await call("POST", "/v1/ui/links", body: try Self.encoder.encode(ConsoleLinkRequest(role: role, scope: scope)))
    }
}
