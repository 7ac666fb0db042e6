import HTTPTypes
import PrefsKit
import Synchronization

/// The bodies of plain reads' answers by request path, kept until the store's next commit: a
/// preference read again and again between changes is resolved and rendered once, and then
/// answered with a look-up.
///
/// A body is kept under the revision that was current before it was rendered, and any read
/// that finds the store at another revision renders afresh (and, at a newer one, starts the
/// memo over). A body may therefore be newer than its revision, never older: a read after an
/// acknowledged write finds the store at that write's revision or later, so it is never
/// answered from before it.
final class ReadAnswers: Sendable {
    /// Past this many paths the memo starts over, so reads of ever new paths cannot grow it
    /// without bound.
    static let capacity = 4096

    private struct Memo {
        var revision: Revision = -1
        var bodies: [String: String] = [:]
    }

    /// The store the reads are answered from.
    let store: any ImmediateResolving
    private let memo = Mutex(Memo())

    /// Answers plain reads from `store`.
    init(store: any ImmediateResolving) {
        self.store = store
    }

    /// The JSON body answering `request`, and whether to close the connection after it; nil to
    /// leave the request to the router.
    func answer(to request: HTTPRequest) -> (body: String, close: Bool)? {
        guard request.method == .get, let path = request.path, !request.hasBody else { return nil }
        return answer(toPath: path, connection: ConnectionOptions(request.headerFields[values: .connection]))
    }

    /// The JSON body answering a GET of `path` with those `Connection` options, and whether to
    /// close the connection after it; nil to leave the request to the router.
    func answer(toPath path: String, connection: ConnectionOptions) -> (body: String, close: Bool)? {
        guard let body = body(forPath: path) else { return nil }
        return (body, connection.close)
    }

    /// How many bodies the memo holds.
    var memoCount: Int {
        memo.withLock { $0.bodies.count }
    }

    /// The body answering a plain GET of `path`, from the memo if it holds one for the store's
    /// current revision.
    private func body(forPath path: String) -> String? {
        let revision = store.committedRevision
        if let body = memo.withLock({ $0.revision == revision ? $0.bodies[path] : nil }) { return body }
        guard let body = CachedRead.body(forPath: path, from: store) else { return nil }
        memo.withLock { memo in
            guard revision >= memo.revision else { return }
            if revision > memo.revision || memo.bodies.count >= Self.capacity { memo = Memo(revision: revision) }
            memo.bodies[path] = body
        }
        return body
    }
}
