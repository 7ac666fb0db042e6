import PrefsKit

/// The outcomes of writes submitted without waiting for them, as they are reported; read by the
/// one test that made it.
final class Outcomes {
    private var iterator: AsyncStream<Result<WriteResult, any Error>>.Iterator
    /// Where a write reports its outcome.
    let report: @Sendable (Result<WriteResult, any Error>) -> Void

    init() {
        let (stream, continuation) = AsyncStream.makeStream(of: Result<WriteResult, any Error>.self)
        iterator = stream.makeAsyncIterator()
        report = { continuation.yield($0) }
    }

    /// The revisions of the next `count` outcomes, in the order reported; throws the first failure.
    func revisions(_ count: Int) async throws -> [Revision] {
        var revisions: [Revision] = []
        while revisions.count < count, let outcome = await iterator.next() {
            revisions.append(try outcome.get().revision)
        }
        return revisions
    }
}
