import Foundation

/// Runs `work` on a new thread of its own and returns what it returns (or throws what it
/// throws), so that a blocking wait — a child process, a blocking read, a store's close —
/// never holds one of the few threads of Swift's concurrency pool (two on a two-core machine),
/// which the awaited work itself may need to finish.
public func onOwnThread<T: Sendable, Failure: Error>(_ work: @escaping @Sendable () throws(Failure) -> T) async throws(Failure)
    -> T
{
    let result = await withCheckedContinuation { (done: CheckedContinuation<Result<T, Failure>, Never>) in
        Thread { done.resume(returning: Result(catching: work)) }.start()
    }
    return try result.get()
}

/// Runs `body`, then `cleanup` — also when `body` throws, whose error is then rethrown: a
/// `defer` that may await.
public func withCleanup<T>(
    isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> T, cleanup: () async -> Void
) async throws -> T {
    let result: T
    do {
        result = try await body()
    } catch {
        await cleanup()
        throw error
    }
    await cleanup()
    return result
}
