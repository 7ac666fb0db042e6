import NIOCore
import PrefsEngine

extension FrontAnswerHandler {
    /// The state of a connection's raw-bytes path (``FrontAnswerHandler``) as a value: which
    /// requests are taken, when reading holds, which events wait, when the handler steps aside.
    /// Each event the handler sees is a transition that returns what the handler does about it;
    /// no channel, no I/O — the handler performs the action (and answers through ``API``).
    struct StateMachine {
        /// Where the connection is.
        enum State {
            /// Taking plain requests: none is being answered.
            case idle
            /// An answer is pending (a write awaiting its commit, a task, a file being sent):
            /// what the client sends next, and the events that would cut the answer off, wait.
            /// `starting` while its delivery is being started: an answer that comes at once leaves
            /// taking up what follows to the loop that started it.
            case answering(starting: Bool)
            /// Streaming a watch's events: the connection carries nothing else.
            case watching(any WatchFeed)
            /// An answer asked to close the connection, a watch ended, or the connection has gone:
            /// nothing more is answered.
            case closing
            /// Everything from here on is the decoder's (a request that is not plain, or the server
            /// stopping).
            case steppedAside
        }

        /// What to do about reading from the socket.
        enum ReadAction: Equatable {
            /// Read.
            case read
            /// Do not read now: the read is held until an answer is sent or the connection takes more.
            case hold
        }

        /// What to do once a read from the socket is complete.
        enum ReadCompleteAction: Equatable {
            /// Pass it on: the handlers behind drive reading now.
            case forward
            /// Read again (or hold the read), as ``StateMachine/read(writable:)`` says.
            case read
        }

        /// What to do with bytes received.
        enum ReceiveAction: Equatable {
            /// Pass them on to the decoder.
            case forward
            /// Drop them: a watch's connection carries nothing else, or nothing more is answered.
            case drop
            /// Answer the pending requests (``StateMachine/nextRequest(writable:)``).
            case answer
            /// Keep them: an answer is pending.
            case wait
        }

        /// What the pending bytes hold next.
        enum NextRequest {
            /// A plain request, whole, with its body's bytes: route it, then say what comes of it
            /// (``StateMachine/requestTaken(_:)`` or ``StateMachine/stepAside()``).
            case request(PlainHead, body: ByteBuffer?)
            /// Not a plain request: the handler has stepped aside, and passes these bytes on.
            case stepAside(passing: ByteBuffer?)
            /// Nothing to answer now.
            case none
        }

        /// What to do about an inbound user event.
        enum EventAction {
            /// Pass the event on.
            case forward
            /// Nothing: the event waits for the pending answer, or the watch goes on to its last event.
            case none
            /// End this watch (if any) and close the connection: the client has gone.
            case close(endingFeed: (any WatchFeed)?)
            /// Step aside (the server is stopping), passing these bytes on, then pass the event on.
            case stepAsideAndForward(passing: ByteBuffer?)
        }

        /// What to do once the channel is writable again.
        enum WritableAction: Equatable {
            /// Write the watch's waiting events.
            case writeEvents
            /// Answer the pending requests, then resume a held read.
            case answerPending
            /// Nothing.
            case none
        }

        /// What to do with an answer that has come.
        enum FinishAction: Equatable {
            /// Send it; then, with `takeUpWaiting`, take up the requests and events that waited.
            case send(takeUpWaiting: Bool)
            /// Drop it: the connection has gone.
            case drop
        }

        /// Where the connection is.
        private(set) var state = State.idle
        /// The largest body taken here; a request with a larger one is the decoder's.
        let maximumBodyBytes: Int
        /// The methods a plain request may name: the endpoint table's.
        let methods: PlainMethods
        /// Bytes received and not yet handled: a request that has not arrived whole, or requests
        /// waiting for an answer or for the connection to take more answers.
        private var pending: ByteBuffer?
        /// Whether a read from the socket is held back until an answer is sent or the connection
        /// takes more answers.
        private(set) var readHeld = false
        /// Events that came while an answer was pending, in order.
        private var heldEvents: [Any] = []

        /// A connection's state, taking requests by `methods` with bodies up to `maximumBodyBytes` itself.
        init(maximumBodyBytes: Int, methods: PlainMethods) {
            self.maximumBodyBytes = maximumBodyBytes
            self.methods = methods
        }

        /// How many received bytes wait to be handled.
        var pendingBytes: Int { pending?.readableBytes ?? 0 }

        /// The watch being streamed, if any.
        var feed: (any WatchFeed)? {
            guard case .watching(let feed) = state else { return nil }
            return feed
        }

        /// Whether the handler has stepped aside for good.
        var isSteppedAside: Bool {
            if case .steppedAside = state { return true }
            return false
        }

        /// Whether an answer is pending.
        var isAnswering: Bool {
            if case .answering = state { return true }
            return false
        }

        // MARK: Reading

        /// The handler would read from the socket.
        /// - Parameter writable: Whether the connection takes more bytes now.
        /// - Returns: Whether to read, or hold the read: a connection that cannot take more answers,
        ///   or whose pending answer has ``FrontAnswerHandler/maximumPendingBytes`` waiting behind it, reads no more.
        mutating func read(writable: Bool) -> ReadAction {
            switch state {
            case .steppedAside, .watching: return .read
            case .idle, .closing, .answering: break
            }
            guard !writable || (isAnswering && pendingBytes >= FrontAnswerHandler.maximumPendingBytes) else { return .read }
            readHeld = true
            return .hold
        }

        /// A read from the socket is complete.
        /// - Returns: Whether to pass it on or to read on.
        func readComplete() -> ReadCompleteAction {
            isSteppedAside ? .forward : .read
        }

        /// An answer was sent, or the connection takes more: a held read may go.
        /// - Returns: `.read` if a read was held.
        mutating func resumeReading() -> ReadAction {
            guard readHeld else { return .hold }
            readHeld = false
            return .read
        }

        /// `bytes` were received.
        /// - Parameter bytes: The bytes.
        /// - Returns: What to do with them.
        mutating func received(_ bytes: ByteBuffer) -> ReceiveAction {
            switch state {
            case .steppedAside: return .forward
            case .watching, .closing: return .drop
            case .idle, .answering: break
            }
            var bytes = bytes
            if var earlier = pending {
                pending = nil  // so that appending does not copy
                earlier.writeBuffer(&bytes)
                bytes = earlier
            }
            pending = bytes
            return isAnswering ? .wait : .answer
        }

        // MARK: Requests

        /// The next request among the pending bytes, while the connection takes answers.
        /// - Parameter writable: Whether the connection takes more bytes now.
        /// - Returns: A whole plain request to answer, the bytes to step aside with, or none.
        mutating func nextRequest(writable: Bool) -> NextRequest {
            guard case .idle = state, let bytes = pending, bytes.readableBytes > 0, writable else { return .none }
            let head: PlainHead
            switch PlainHead.parse(bytes, methods: methods) {
            case .incomplete where bytes.readableBytes < FrontAnswerHandler.maximumHeadBytes:
                return .none
            case .head(let parsed) where parsed.bodyLength <= maximumBodyBytes:
                head = parsed
            case .head, .incomplete, .other:
                // Not plain: this request and all that follow are the decoder's.
                return .stepAside(passing: stepAside())
            }
            guard bytes.readableBytes >= head.length + head.bodyLength else { return .none }
            return .request(head, body: bytes.getSlice(at: bytes.readerIndex + head.length, length: head.bodyLength))
        }

        /// The request ``nextRequest(writable:)`` returned is taken: its bytes are handled.
        /// - Parameter head: Its head.
        mutating func requestTaken(_ head: PlainHead) {
            pending?.moveReaderIndex(forwardBy: head.length + head.bodyLength)
            if pending?.readableBytes == 0 { pending = nil }
        }

        /// Steps aside for the rest of the connection: everything goes on to the decoder.
        /// - Returns: The bytes received and not handled, to pass on.
        mutating func stepAside() -> ByteBuffer? {
            state = .steppedAside
            defer { pending = nil }
            return pending
        }

        // MARK: Answers

        /// An answer that is not whole at once is started: a pending answer (`starting` until
        /// ``answerStartReturned()``) or a file being sent.
        /// - Parameter starting: Whether the delivery is being started by the request loop.
        mutating func answerStarted(starting: Bool) {
            state = .answering(starting: starting)
        }

        /// The start of a pending answer has returned (the answer may have come meanwhile).
        mutating func answerStartReturned() {
            if case .answering(starting: true) = state { state = .answering(starting: false) }
        }

        /// A pending answer has come, or a file is sent (or only its head, for `HEAD`).
        /// - Returns: Whether to send it, and then take up what waited; an answer that comes while
        ///   its delivery is being started leaves that to the request loop.
        mutating func answerFinished() -> FinishAction {
            guard case .answering(let starting) = state else { return .drop }
            state = .idle
            return .send(takeUpWaiting: !starting)
        }

        /// After an answer: the events that waited for it, to handle again in order, unless another
        /// answer or a watch is under way now.
        /// - Returns: The events, or nil.
        mutating func takeHeldEvents() -> [Any]? {
            switch state {
            case .answering, .watching: return nil
            case .idle, .closing, .steppedAside:
                defer { heldEvents = [] }
                return heldEvents
            }
        }

        /// The connection closes after the answers written: nothing more is answered.
        /// - Returns: Whether to resume a held read (to see the client close its side).
        mutating func closeAfterAnswers() -> ReadAction {
            state = .closing
            pending = nil
            return resumeReading()
        }

        // MARK: Watches

        /// A watch's head and opening are written: the connection streams `feed` from now on.
        /// - Parameter feed: The watch.
        mutating func watchStarted(_ feed: any WatchFeed) {
            state = .watching(feed)
            pending = nil
        }

        /// The watch's feed has ended: the connection closes once its end is written.
        mutating func watchEnded() {
            state = .closing
        }

        // MARK: The connection

        /// An inbound user event.
        /// - Parameters:
        ///   - event: The event.
        ///   - isInputClosed: Whether it says the client closed its side.
        ///   - isQuiesce: Whether it says the server is starting to stop.
        /// - Returns: What to do about it.
        mutating func eventTriggered(_ event: Any, isInputClosed: Bool, isQuiesce: Bool) -> EventAction {
            switch state {
            case .answering:
                heldEvents.append(event)
                return .none
            case .steppedAside:
                return .forward
            case .watching(let feed):
                if isInputClosed {
                    // The client has gone: end its watch now, not at its next event.
                    state = .closing
                    return .close(endingFeed: feed)
                }
                // The engine ends watches at shutdown, and the connection closes after the last event.
                return isQuiesce ? .none : .forward
            case .closing:
                // The client has closed its side after the last answer.
                if isInputClosed { return .close(endingFeed: nil) }
                return isQuiesce ? .stepAsideAndForward(passing: stepAside()) : .forward
            case .idle:
                // The client has closed its side (or the server has, being cancelled) with no
                // answer to wait for: the connection ends.
                if isInputClosed {
                    state = .closing
                    return .close(endingFeed: nil)
                }
                return isQuiesce ? .stepAsideAndForward(passing: stepAside()) : .forward
            }
        }

        /// The connection takes more bytes again.
        /// - Returns: What to write now.
        func writable() -> WritableAction {
            switch state {
            case .watching: .writeEvents
            case .idle, .closing: .answerPending
            case .answering, .steppedAside: .none
            }
        }

        /// The connection has gone (or the handler is removed): nothing more is answered.
        /// - Returns: The watch to end, if one was streamed.
        mutating func connectionGone() -> (any WatchFeed)? {
            let feed = feed
            pending = nil
            heldEvents = []
            if !isSteppedAside { state = .closing }
            return feed
        }
    }
}
