import NIOCore
import NIOHTTP1
import PrefsKit

extension HTTP1ConnectionHandler {
    /// The HTTP/1 rules of a connection (``HTTP1ConnectionHandler``) as a value: each event the
    /// handler sees — a request part read, a parse error, an answer part written, the client
    /// closing its side — is a transition that returns what the handler does about it. No
    /// channel, no I/O: the handler performs the action.
    struct StateMachine {
        /// What the answer to a request owes it.
        struct Request: Equatable {
            /// Whether the connection stays open after the answer.
            var persists: Bool
            /// Whether the request was HTTP/1.0.
            var http10: Bool
        }

        /// What to do with a request part read from the decoder.
        enum ReadAction: Equatable {
            /// Pass it on as it is.
            case pass
            /// Pass the head on saying exactly `Connection: close`: the request does not persist.
            case passClosing
            /// Drop it: the connection is closing, or refuses what it could not parse.
            case drop
            /// Drop it, answer this refusal, then close: the head's framing is faulty.
            case refuse(PrefsError)
        }

        /// What to do with an error the decoder (or a handler before) reports.
        enum ErrorAction: Equatable {
            /// Pass it on: the body's reader fails with it, or it is not the decoder's.
            case forward
            /// Nothing now: the connection has nothing more to say, or the refusal waits for
            /// the answers due before it.
            case ignore
            /// Answer this refusal, then close.
            case refuse(PrefsError)
        }

        /// What to do with an answer's head.
        enum HeadAction: Equatable {
            /// Write it with these changes: the HTTP/1.0 status line (a close-delimited body),
            /// and the `Connection` header to set (nil: as it is).
            case write(http10StatusLine: Bool, connection: String?)
            /// Drop it, succeeding its promise: the connection is closing (a second answer).
            case drop
        }

        /// What to do with an answer's body part.
        enum BodyAction: Equatable {
            case write
            /// Drop it, succeeding its promise: the connection is closing.
            case drop
        }

        /// What to do with an answer's end.
        enum EndAction: Equatable {
            case write
            /// Write it, then close the connection (its sending side first).
            case writeAndClose
            /// Write it, then answer the request that could not be parsed with this refusal and close.
            case writeThenRefuse(PrefsError)
            /// Drop it, succeeding its promise: the connection is closing.
            case drop
        }

        /// What to do when the client closes its side.
        enum InputClosedAction: Equatable {
            /// Close the connection: nothing more is answered on it.
            case close
            /// Nothing: answers are still due.
            case none
        }

        /// The answer to an HTTP/1.0 request with `Transfer-Encoding`.
        static let http10TransferEncoding = PrefsError(
            .invalidRequest,
            "The request is not well-formed HTTP/1.1: an HTTP/1.0 request cannot have a Transfer-Encoding. Nothing was changed, and the connection is closed."
        )

        /// The requests passed on whose answers have not ended yet, oldest first.
        private var unanswered = CircularBuffer<Request>()
        /// Whether a request's body is being read: its head has passed, its end has not.
        private var readingBody = false
        /// Whether the connection closes once the answer being written ends.
        private var closeAfterAnswer = false
        /// Once a request's body could not be parsed: how many answers may still end before the
        /// connection closes.
        private var answersBeforeClosing: Int?
        /// The answer to a request whose head could not be parsed, sent once the answers before it end.
        private var refusal: PrefsError?
        /// Whether the connection is closing: nothing more is answered.
        private(set) var closing = false

        /// A request's head was read.
        /// - Parameters:
        ///   - http10: Whether the request is HTTP/1.0.
        ///   - connection: What its `Connection` header lines ask.
        ///   - transferEncoding: Whether it has a `Transfer-Encoding` header: faulty framing in an
        ///     HTTP/1.0 request (RFC 9112 §6.1), refused as a head NIO could not parse.
        /// - Returns: How to pass it on.
        mutating func headReceived(http10: Bool, connection: ConnectionOptions, transferEncoding: Bool = false) -> ReadAction {
            guard !closing, refusal == nil else { return .drop }
            if http10, transferEncoding {
                // A connection closing after the answers due has nothing more to say.
                guard unanswered.last?.persists ?? true else { return .drop }
                refusal = Self.http10TransferEncoding
                guard case .refuse(let refusal) = unanswered.isEmpty ? refuse() : .ignore else { return .drop }
                return .refuse(refusal)
            }
            let persists = connection.persists(http10: http10)
            unanswered.append(Request(persists: persists, http10: http10))
            readingBody = true
            return persists ? .pass : .passClosing
        }

        /// A part of a request's body was read.
        /// - Returns: Whether to pass it on.
        func bodyReceived() -> ReadAction {
            closing || refusal != nil ? .drop : .pass
        }

        /// A request's end was read.
        /// - Returns: Whether to pass it on.
        mutating func endReceived() -> ReadAction {
            guard !closing, refusal == nil else { return .drop }
            readingBody = false
            return .pass
        }

        /// The pipeline reported `error`.
        /// - Parameter error: The error; a request NIO could not parse is an `HTTPParserError`.
        /// - Returns: Whether to pass it on, refuse the request, or do nothing.
        mutating func errorCaught(_ error: any Error) -> ErrorAction {
            // Once the connection is to close, NIO's decoder only repeats that it has failed.
            guard !closing, refusal == nil, answersBeforeClosing == nil else { return .ignore }
            guard let error = error as? HTTPParserError else { return .forward }
            if readingBody {
                // The body's reader fails with the error, and the router answers it.
                readingBody = false
                answersBeforeClosing = unanswered.count
                return .forward
            }
            // A connection closing after the answers due has nothing more to say.
            guard unanswered.last?.persists ?? true else { return .ignore }
            refusal = error.refusal
            return unanswered.isEmpty ? refuse() : .ignore
        }

        /// An answer's head is being written.
        /// - Parameters:
        ///   - mayHaveBody: Whether its status may have a body.
        ///   - hasContentLength: Whether it says its body's length.
        ///   - says: What its own `Connection` header says.
        /// - Returns: How to write it.
        mutating func headWritten(mayHaveBody: Bool, hasContentLength: Bool, says: ConnectionOptions) -> HeadAction {
            guard !closing else { return .drop }
            guard let request = unanswered.first else { return .write(http10StatusLine: false, connection: nil) }
            var closes = !request.persists || answersBeforeClosing == 1
            // HTTP/1.0 has no chunked encoding: a body of unknown length is close-delimited.
            let closeDelimited = request.http10 && mayHaveBody && !hasContentLength
            if closeDelimited { closes = true }
            // A request that does not persist has its answer's writer close the connection.
            closeAfterAnswer = closes && (request.persists || answersBeforeClosing == 1)
            // An answer that says so already is left as it is, the same bytes on every path.
            let connection: String? =
                if closes, !says.close { "close" } else if !closes, request.http10, !says.keepAlive { "keep-alive" } else { nil }
            return .write(http10StatusLine: closeDelimited, connection: connection)
        }

        /// A part of an answer's body is being written.
        /// - Returns: Whether to write it.
        func bodyWritten() -> BodyAction {
            closing ? .drop : .write
        }

        /// An answer's end is being written.
        /// - Returns: How to write it, and what follows it.
        mutating func endWritten() -> EndAction {
            guard !closing else { return .drop }
            guard let request = unanswered.popFirst() else { return .write }
            if let remaining = answersBeforeClosing { answersBeforeClosing = remaining - 1 }
            guard !closeAfterAnswer else {
                closing = true
                return .writeAndClose
            }
            // Its writer closes the connection after it: nothing more is answered.
            if !request.persists { closing = true }
            guard unanswered.isEmpty, let refusal else { return .write }
            closing = true
            return .writeThenRefuse(refusal)
        }

        /// The client closed its side of the connection.
        /// - Returns: Whether to close the connection.
        func inputClosed() -> InputClosedAction {
            closing ? .close : .none
        }

        /// Refuses the request that could not be parsed: nothing more is answered.
        private mutating func refuse() -> ErrorAction {
            guard let refusal else { return .ignore }
            closing = true
            return .refuse(refusal)
        }
    }
}
