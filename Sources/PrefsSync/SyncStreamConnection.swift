import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import PrefsKit
import PrefsWire
import Synchronization

/// One sync stream to the upstream (`POST /v1/sync:stream`), open: each exchange goes up as a
/// numbered frame on the request's body, which stays open, and its answer comes back on the
/// response's, by its number — so that a device's pushes and its long poll share one connection,
/// and a change costs a few dozen bytes rather than two HTTP heads (both ways deflated).
///
/// An exchange whose answer does not come in time, or a connection that goes, ends the stream:
/// every exchange under way fails `unreachable`, as each would have over its own request, and
/// the replica exchanges again — over a new stream ``HTTPUpstream`` opens.
final class SyncStreamConnection: Sendable {
    private struct State {
        /// The number of the next exchange.
        var nextID: Int64 = 1
        /// The exchanges sent and not yet answered, by number.
        var waiting: [Int64: CheckedContinuation<SyncAnswer, any Error>] = [:]
        /// Exchanges cancelled before they were sent.
        var cancelled: Set<Int64> = []
        /// Why the stream ended, once it has: every exchange from then on fails with it.
        var ended: PrefsError?
        /// The request's frames, deflated as one stream.
        var writer = FrameWriter(deflated: true)
    }

    // FrameWriter holds a zlib stream, which is not Sendable: it is only used under the lock,
    // where each frame is compressed and handed to the body in one step.
    private let state = Mutex(State())
    /// The request's body, frame by frame.
    private let body: AsyncStream<ByteBuffer>.Continuation
    /// Reads the answers' frames off the response; cancelled when the stream ends.
    private let reading = Mutex<Task<Void, Never>?>(nil)

    /// A stream whose request's body is `body` and whose answers are `response`'s, deflated if
    /// it says `Content-Encoding: deflate`; an error ending it is told as `describe` words it.
    init(
        body: AsyncStream<ByteBuffer>.Continuation, response: HTTPClientResponse, largestAnswer: Int,
        describe: @escaping @Sendable (any Error) -> PrefsError
    ) {
        self.body = body
        let deflated = response.headers["Content-Encoding"].contains { $0.lowercased() == "deflate" }
        let task = Task { [weak self] in
            var reader = FrameReader(deflated: deflated, limit: largestAnswer)
            do {
                for try await piece in response.body {
                    for frame in try reader.frames(in: piece.readableBytesView) {
                        let answer = try WireJSON.decode(SyncStreamAnswer.self, from: frame)
                        self?.take(answer)
                    }
                }
                self?.end(PrefsError(.unreachable, "The upstream ended the sync stream."))
            } catch {
                self?.end(describe(error))
            }
        }
        reading.withLock { $0 = task }
    }

    /// Whether the stream has ended: a new one is needed.
    var hasEnded: Bool { state.withLock { $0.ended != nil } }

    /// Sends `request` and returns its answer, or fails the stream if none comes within
    /// `timeout`.
    func exchange(_ request: SyncRequest, timeout: Duration) async throws -> SyncAnswer {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        return try await withThrowingTaskGroup(of: SyncAnswer.self) { group in
            group.addTask { try await self.send(request, id: id) }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw Late()
            }
            defer { group.cancelAll() }
            do {
                return try await group.next()!
            } catch is Late {
                let late = PrefsError(.unreachable, "The upstream did not answer an exchange in time; the sync stream is closed.")
                end(late)
                throw late
            }
        }
    }

    /// An exchange's answer did not come in time.
    private struct Late: Error {}

    /// Ends the stream (at once, whatever is under way): its exchanges fail with `reason`.
    func end(_ reason: PrefsError) {
        let waiting = state.withLock { state in
            if state.ended == nil { state.ended = reason }
            defer { state.waiting = [:] }
            return state.waiting
        }
        body.finish()
        reading.withLock { $0 }?.cancel()
        for continuation in waiting.values { continuation.resume(throwing: reason) }
    }

    /// Sends exchange `id` and waits for its answer; cancelled, stops waiting.
    private func send(_ request: SyncRequest, id: Int64) async throws -> SyncAnswer {
        let frame = [UInt8](try WireJSON.encoder().encode(SyncStreamRequest(id: id, request: request)))
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let refusal: (any Error)? = state.withLock { state in
                    if let ended = state.ended { return ended }
                    if state.cancelled.remove(id) != nil { return CancellationError() }
                    state.waiting[id] = continuation
                    body.yield(ByteBuffer(bytes: state.writer.bytes(for: frame)))
                    return nil
                }
                if let refusal { continuation.resume(throwing: refusal) }
            }
        } onCancel: {
            let waiting = state.withLock { state in
                guard let waiting = state.waiting.removeValue(forKey: id) else {
                    state.cancelled.insert(id)
                    return nil as CheckedContinuation<SyncAnswer, any Error>?
                }
                return waiting
            }
            waiting?.resume(throwing: CancellationError())
        }
    }

    /// An answer's frame: resumes its exchange; one without a number ends the stream.
    private func take(_ frame: SyncStreamAnswer) {
        guard let id = frame.id else {
            return end(frame.failure ?? PrefsError(.unavailable, "The upstream ended the sync stream."))
        }
        guard let waiting = state.withLock({ $0.waiting.removeValue(forKey: id) }) else { return }
        if let answer = frame.answer {
            waiting.resume(returning: answer)
        } else {
            waiting.resume(throwing: frame.failure ?? PrefsError(.unavailable, "The upstream answered exchange \(id) with nothing."))
        }
    }
}
