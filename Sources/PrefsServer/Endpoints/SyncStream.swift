import Foundation
import HTTPTypes
import NIOCore
import PrefsEngine
import PrefsKit
import PrefsWire
import Synchronization

/// `POST /v1/sync:stream`: a device's exchanges on one long-lived connection, both ways at once —
/// what `POST /v1/sync` answers, without a request's head and an answer's head for each.
///
/// The request's body is a stream of frames, one JSON text a line (``SyncStreamRequest``: an
/// exchange and its number); the answer's, sent as each exchange finishes, is the same
/// (``SyncStreamAnswer``). Each frame is served exactly as `POST /v1/sync` serves its body, by
/// the engine's ``EngineServing/exchange(_:grant:context:)``, side by side with the others (a
/// push is not held up behind a long poll), so that the stream adds no rule of its own: a frame
/// lost with its connection is an exchange lost with its connection, and the device pushes it
/// again. With `Content-Encoding: deflate` the request's frames are one zlib stream, each frame
/// flushed; with `deflate` in `Accept-Encoding` the answer's are too — what a frame repeats of
/// the frames before it costs a few bytes, so a change crosses the wire in a few dozen.
///
/// The stream ends when the device ends its body (once the exchanges under way are answered; a
/// long poll then ends unanswered), when the connection goes, when the engine starts to stop,
/// after a frame that cannot be read (a last frame without a number says why), and when the
/// device's token is revoked (the
/// exchange that finds it so answers `unauthorized`, and is the last).
struct SyncStream: Sendable {
    /// How many long polls of one stream, and how many other exchanges, may be under way at
    /// once: a device runs a pusher and a long poll, and a `sync:now` beside them.
    static let exchangesAtOnce = 8

    private let engine: any EngineServing
    private let grant: AccessGrant
    private let context: WriteContext
    private let frames: AsyncThrowingStream<Data, any Error>
    private let inflates: Bool
    private let frameLimit: Int

    /// The stream `request` opens: its token must be a named one; `Content-Encoding` says how its
    /// frames come.
    ///
    /// - Throws: ``PrefsError`` `forbidden` without a named token; `invalid_request` for a
    ///   content coding other than `deflate` or `identity`.
    init(_ request: EndpointRequest, engine: any EngineServing, limits: ServerLimits) throws {
        let grant = try request.access()
        guard grant.token != nil else {
            throw PrefsError(
                .forbidden, "Sync needs a named token: a device is its token (prefsctl token create NAME --role writer --scope S).")
        }
        switch request.headers[.contentEncoding]?.lowercased() {
        case nil, "identity": inflates = false
        case "deflate": inflates = true
        case let other?:
            throw PrefsError(
                .invalidRequest, "A sync stream's frames come deflated (Content-Encoding: deflate) or plain, not '\(other.prefix(40))'.")
        }
        self.engine = engine
        self.grant = grant
        context = request.writeContext
        frames = request.bodyStream ?? AsyncThrowingStream { nil }
        frameLimit = limits.maximumRequestBytes
    }

    /// The answer: `200` at once, and the answers' frames as the exchanges finish — deflated if
    /// `acceptEncoding` takes `deflate`.
    func answer(acceptEncoding: String?) -> Answer {
        let deflates = Self.takesDeflate(acceptEncoding)
        let (chunks, output) = AsyncThrowingStream<Data, any Error>.makeStream()
        let serving = Task { await serve(into: output, deflated: deflates) }
        // The connection went (its answer is no longer read): the exchanges under way end.
        output.onTermination = { _ in serving.cancel() }
        var fields = [HTTPField(name: .contentType, value: "application/x-ndjson")]
        if deflates { fields.append(HTTPField(name: .contentEncoding, value: "deflate")) }
        return Answer(status: .ok, fields: fields, body: .streamed(length: nil, chunks: chunks))
    }

    /// Reads the frames and serves each as its own task, until the stream ends; then ends the
    /// answer.
    private func serve(into output: AsyncThrowingStream<Data, any Error>.Continuation, deflated: Bool) async {
        let sender = Sender(output: output, deflated: deflated)
        await withTaskGroup(of: Void.self) { group in
            // The engine stopping ends the stream: the listener waits for its connections.
            group.addTask {
                await engine.waitUntilStopping()
                sender.end()
            }
            group.addTask {
                await readFrames(sender: sender)
                sender.end()
            }
            await sender.waitUntilEnded()
            group.cancelAll()
        }
        output.finish()
    }

    /// Serves the frames as they arrive, at most ``exchangesAtOnce`` long polls and as many other
    /// exchanges at once; returns once the body has ended and its exchanges are answered — but
    /// for long polls, which end then unanswered (the device has stopped listening for them) —
    /// or once the stream has ended.
    private func readFrames(sender: Sender) async {
        await withTaskGroup(of: Void.self) { polls in
            await withTaskGroup(of: Void.self) { others in
                var (pollsUnderWay, othersUnderWay) = (0, 0)
                var reader = FrameReader(deflated: inflates, limit: frameLimit)
                do {
                    for try await piece in frames {
                        for frame in try reader.frames(in: piece) {
                            let exchange: SyncStreamRequest
                            do {
                                exchange = try JSONCoding.decode(
                                    SyncStreamRequest.self, from: ByteBuffer(bytes: frame),
                                    what: "a sync stream's frame ({\"id\", \"request\": {\"cursor\", \"mutations\", \"wait\"}})")
                            } catch {
                                return sender.end(with: API.prefsError(for: error))
                            }
                            if (exchange.request.wait ?? 0) > 0 {
                                if pollsUnderWay == Self.exchangesAtOnce { await polls.next() } else { pollsUnderWay += 1 }
                                polls.addTask { await serve(exchange, sender: sender) }
                            } else {
                                if othersUnderWay == Self.exchangesAtOnce { await others.next() } else { othersUnderWay += 1 }
                                others.addTask { await serve(exchange, sender: sender) }
                            }
                        }
                    }
                    if reader.hasPartialFrame {
                        sender.end(with: PrefsError(.invalidRequest, "The sync stream's body ended inside a frame."))
                    }
                } catch {
                    // A body that could not be read: the connection went, or its bytes were no frames.
                    sender.end(with: API.prefsError(for: error))
                }
                await others.waitForAll()
            }
            polls.cancelAll()
        }
    }

    /// Serves one exchange, and sends its answer or its error.
    private func serve(_ exchange: SyncStreamRequest, sender: Sender) async {
        do {
            try SyncEndpoints.checkWait(exchange.request)
            let answer = try await engine.exchange(exchange.request, grant: grant, context: context)
            sender.send(SyncStreamAnswer(id: exchange.id, answer: answer))
        } catch is CancellationError {
            return
        } catch {
            let refusal = API.prefsError(for: error)
            sender.send(SyncStreamAnswer(id: exchange.id, error: refusal))
            // A revoked token ends the stream with the exchange that found it so.
            if refusal.code == .unauthorized { sender.end() }
        }
    }

    /// Whether an `Accept-Encoding` value takes `deflate`: named, and not at `q=0`.
    static func takesDeflate(_ acceptEncoding: String?) -> Bool {
        guard let acceptEncoding else { return false }
        return acceptEncoding.split(separator: ",").contains { item in
            let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard parts.first == "deflate" else { return false }
            let weight = parts.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) }
            return (weight ?? 1) > 0
        }
    }

    /// What sends the answer's frames — each compressed and yielded in one step, so that the
    /// zlib stream's order is the answer's order — and ends the stream once.
    private final class Sender: Sendable {
        private struct State {
            var writer: FrameWriter
            var ended = false
            var waiting: [CheckedContinuation<Void, Never>] = []
        }

        private let output: AsyncThrowingStream<Data, any Error>.Continuation
        // FrameWriter holds a zlib stream, which is not Sendable: only used under the lock.
        private let state: Mutex<State>

        init(output: AsyncThrowingStream<Data, any Error>.Continuation, deflated: Bool) {
            self.output = output
            state = Mutex(State(writer: FrameWriter(deflated: deflated)))
        }

        /// Sends `frame`, unless the stream has ended.
        func send(_ frame: SyncStreamAnswer) {
            let json = [UInt8](JSONCoding.encoded(frame))
            state.withLock { state in
                guard !state.ended else { return }
                output.yield(Data(state.writer.bytes(for: json)))
            }
        }

        /// Ends the stream, after a last frame saying why, if `error`.
        func end(with error: PrefsError? = nil) {
            if let error { send(SyncStreamAnswer(id: nil, error: error)) }
            let waiting = state.withLock { state in
                state.ended = true
                defer { state.waiting = [] }
                return state.waiting
            }
            for continuation in waiting { continuation.resume() }
        }

        /// Returns once the stream has ended; cancelled, ends it.
        func waitUntilEnded() async {
            await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    let ended = state.withLock { state in
                        if !state.ended { state.waiting.append(continuation) }
                        return state.ended
                    }
                    if ended { continuation.resume() }
                }
            } onCancel: {
                end()
            }
        }
    }
}
