/// A condition a test waited for did not come to hold.
public struct ConditionTimeout: Error, CustomStringConvertible {
    /// What was waited for.
    public var condition: String
    /// How long.
    public var timeout: Duration

    public var description: String { "\(condition): not so after \(timeout)" }
}

/// Returns once `condition` holds, asking again every `interval`; throws ``ConditionTimeout``
/// if it does not within `timeout`. For a state the test can only ask about (a daemon's count
/// of watchers, a listener that starts a moment after the socket, a file a program writes) —
/// where there is an event to await, tests await it instead. The timeout is a bound on liveness,
/// far above what the condition takes, not a timing: the test fails rather than hangs when what
/// it waits for never comes.
public func waitUntil(
    _ condition: String, timeout: Duration = .seconds(60), interval: Duration = .milliseconds(10),
    isolation: isolated (any Actor)? = #isolation, _ holds: () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while try await !holds() {
        guard ContinuousClock.now < deadline else { throw ConditionTimeout(condition: condition, timeout: timeout) }
        try await Task.sleep(for: interval)
    }
}

/// Whether `condition` comes to hold within `timeout` (asking as ``waitUntil(_:timeout:interval:isolation:_:)``
/// does), for a test that asserts on the answer itself.
public func holdsWithin(
    _ timeout: Duration, _ condition: String, isolation: isolated (any Actor)? = #isolation,
    _ holds: () async throws -> Bool
) async throws -> Bool {
    do {
        try await waitUntil(condition, timeout: timeout, isolation: isolation, holds)
        return true
    } catch is ConditionTimeout {
        return false
    }
}
