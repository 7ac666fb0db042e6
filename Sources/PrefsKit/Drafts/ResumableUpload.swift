/// How a blob named by its SHA-256 goes up to a prefsd, whatever carries it (a client on the
/// daemon's socket, a replica's HTTP to its upstream): ask where it stands, send the rest from
/// there, and after a cut ask again and go on — for as long as each try gets further within the
/// patience given.
package enum ResumableUpload {
    /// Sends a blob until the store holds it.
    ///
    /// - Parameters:
    ///   - patience: How long the upload may go without getting further (a cut connection, a
    ///     daemon restarting: errors `unreachable`) before it fails with the last such error.
    ///   - state: Asks where the blob stands (`HEAD`).
    ///   - send: Sends the bytes from an offset (`PATCH`), and says where the blob stands then.
    /// - Returns: The blob's size, once the store holds it.
    /// - Throws: What `state` or `send` throw that is not `unreachable`; the last `unreachable`
    ///   once the patience runs out.
    package static func run(
        patience: Duration, state: () async throws -> BlobState, send: (_ offset: Int64) async throws -> BlobState
    ) async throws -> Int64 {
        var deadline = ContinuousClock.now + patience
        var pause = Duration.milliseconds(50)
        var furthest: Int64 = -1
        while true {
            let problem: PrefsError
            do {
                switch try await state() {
                case .held(let byteSize):
                    return byteSize
                case .uploading(let offset):
                    if offset > furthest {
                        // Progress: the patience and the pause start again.
                        (furthest, deadline, pause) = (offset, ContinuousClock.now + patience, .milliseconds(50))
                    }
                    if case .held(let byteSize) = try await send(offset) { return byteSize }
                    // The body ended early, or another upload moved it on: ask again.
                    problem = PrefsError(.conflict, "The upload stands elsewhere than it was sent from.")
                }
            } catch let error as PrefsError where error.code == .unreachable {
                problem = error
            }
            guard ContinuousClock.now + pause < deadline else { throw problem }
            try await Task.sleep(for: pause)
            pause = min(pause * 2, .seconds(1))
        }
    }
}
