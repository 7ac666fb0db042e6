import NIOHTTP1
import PrefsKit
import Testing

@testable import PrefsServer

/// ``HTTP1ConnectionHandler/StateMachine`` driven directly, without a channel: every state it
/// can be in, and what each event returns there — including the late ones (a request after the
/// connection closes, a second answer to a refused request).
@Suite struct HTTP1ConnectionStateMachineTests {
    typealias Machine = HTTP1ConnectionHandler.StateMachine

    static let keepAlive = ConnectionOptions("keep-alive")
    static let close = ConnectionOptions("close")
    static let none = ConnectionOptions(nil)

    /// A whole request read: head, end.
    static func request(_ machine: inout Machine, http10: Bool = false, connection: ConnectionOptions = none)
        -> Machine.ReadAction
    {
        let action = machine.headReceived(http10: http10, connection: connection)
        #expect(machine.endReceived() == action.passedOn)
        return action
    }

    /// A whole answer of known length written: head, body, end.
    static func answer(_ machine: inout Machine, says: ConnectionOptions = none) -> (Machine.HeadAction, Machine.EndAction) {
        let head = machine.headWritten(mayHaveBody: true, hasContentLength: true, says: says)
        #expect(machine.bodyWritten() == (head == .drop ? .drop : .write))
        return (head, machine.endWritten())
    }

    @Test func anHTTP11RequestPersistsAndItsAnswerIsLeftAsItIs() {
        var machine = Machine()
        #expect(Self.request(&machine) == .pass)
        #expect(machine.bodyReceived() == .pass)
        let (head, end) = Self.answer(&machine)
        #expect(head == .write(http10StatusLine: false, connection: nil))
        #expect(end == .write)
        #expect(!machine.closing)
        #expect(machine.inputClosed() == .none)
        // The next request is taken as the first was.
        #expect(Self.request(&machine) == .pass)
    }

    @Test func aRequestThatAsksToCloseIsAnsweredWithCloseAndClosesAfterIt() {
        var machine = Machine()
        #expect(Self.request(&machine, connection: Self.close) == .passClosing)
        let (head, end) = Self.answer(&machine)
        #expect(head == .write(http10StatusLine: false, connection: "close"))
        // Its writer (the router) closes the connection: nothing more is answered.
        #expect(end == .write)
        #expect(machine.closing)
        #expect(machine.inputClosed() == .close)
        // A request read after it is dropped, and so is a late answer.
        #expect(machine.headReceived(http10: false, connection: Self.none) == .drop)
        #expect(machine.bodyReceived() == .drop)
        #expect(machine.endReceived() == .drop)
        #expect(machine.headWritten(mayHaveBody: true, hasContentLength: true, says: Self.none) == .drop)
        #expect(machine.bodyWritten() == .drop)
        #expect(machine.endWritten() == .drop)
    }

    @Test func anAnswerThatSaysCloseAlreadyIsLeftAsItIs() {
        var machine = Machine()
        _ = Self.request(&machine, connection: Self.close)
        #expect(Self.answer(&machine, says: Self.close).0 == .write(http10StatusLine: false, connection: nil))
    }

    @Test func http10PersistsOnlyWithKeepAliveAndIsAnsweredSo() {
        var machine = Machine()
        #expect(Self.request(&machine, http10: true, connection: Self.keepAlive) == .pass)
        #expect(Self.answer(&machine) == (.write(http10StatusLine: false, connection: "keep-alive"), .write))
        #expect(Self.request(&machine, http10: true, connection: Self.keepAlive) == .pass)
        #expect(Self.answer(&machine, says: Self.keepAlive).0 == .write(http10StatusLine: false, connection: nil))
        #expect(!machine.closing)
        #expect(Self.request(&machine, http10: true) == .passClosing)
        #expect(Self.answer(&machine) == (.write(http10StatusLine: false, connection: "close"), .write))
        #expect(machine.closing)
    }

    @Test func anHTTP10AnswerOfUnknownLengthIsCloseDelimitedAndClosesTheConnection() {
        var machine = Machine()
        _ = Self.request(&machine, http10: true, connection: Self.keepAlive)
        let head = machine.headWritten(mayHaveBody: true, hasContentLength: false, says: Self.none)
        #expect(head == .write(http10StatusLine: true, connection: "close"))
        #expect(machine.bodyWritten() == .write)
        #expect(machine.endWritten() == .writeAndClose)
        #expect(machine.closing)
        // A status without a body keeps the HTTP/1.1 status line.
        var other = Machine()
        _ = Self.request(&other, http10: true, connection: Self.keepAlive)
        #expect(
            other.headWritten(mayHaveBody: false, hasContentLength: false, says: Self.none)
                == .write(http10StatusLine: false, connection: "keep-alive"))
    }

    @Test func aHeadThatCannotBeParsedIsRefusedAtOnceWhenNothingIsDue() {
        var machine = Machine()
        let error = HTTPParserError.invalidVersion
        #expect(machine.errorCaught(error) == .refuse(error.refusal))
        #expect(machine.closing)
        // NIO's decoder repeats itself; an answer after the refusal: both are dropped.
        #expect(machine.errorCaught(error) == .ignore)
        #expect(machine.headWritten(mayHaveBody: true, hasContentLength: true, says: Self.none) == .drop)
        #expect(machine.endWritten() == .drop)
        #expect(machine.inputClosed() == .close)
    }

    @Test func aHeadThatCannotBeParsedIsRefusedAfterTheAnswersDue() {
        var machine = Machine()
        _ = Self.request(&machine)
        _ = Self.request(&machine)
        let error = HTTPParserError.invalidHeaderToken
        #expect(machine.errorCaught(error) == .ignore)
        #expect(!machine.closing)
        // Nothing read after the bad head goes on.
        #expect(machine.headReceived(http10: false, connection: Self.none) == .drop)
        #expect(Self.answer(&machine) == (.write(http10StatusLine: false, connection: nil), .write))
        #expect(Self.answer(&machine) == (.write(http10StatusLine: false, connection: nil), .writeThenRefuse(error.refusal)))
        #expect(machine.closing)
    }

    @Test func anHTTP10HeadWithTransferEncodingIsRefusedAsFaultyFraming() {
        let refusal = Machine.http10TransferEncoding
        // Nothing due: refused at once, and nothing of it goes on.
        var idle = Machine()
        #expect(idle.headReceived(http10: true, connection: Self.keepAlive, transferEncoding: true) == .refuse(refusal))
        #expect(idle.closing)
        #expect(idle.bodyReceived() == .drop)
        #expect(idle.endReceived() == .drop)
        // An answer due: refused after it.
        var busy = Machine()
        _ = Self.request(&busy)
        #expect(busy.headReceived(http10: true, connection: Self.none, transferEncoding: true) == .drop)
        #expect(Self.answer(&busy) == (.write(http10StatusLine: false, connection: nil), .writeThenRefuse(refusal)))
        // HTTP/1.1 frames by it.
        var http11 = Machine()
        #expect(http11.headReceived(http10: false, connection: Self.none, transferEncoding: true) == .pass)
    }

    @Test func aBadHeadAfterARequestThatClosesIsNotAnswered() {
        var machine = Machine()
        _ = Self.request(&machine, connection: Self.close)
        #expect(machine.errorCaught(HTTPParserError.invalidVersion) == .ignore)
        #expect(Self.answer(&machine) == (.write(http10StatusLine: false, connection: "close"), .write))
        #expect(machine.closing)
    }

    @Test func aBodyThatCannotBeParsedFailsItsReaderAndClosesAfterItsAnswer() {
        var machine = Machine()
        _ = Self.request(&machine)
        #expect(machine.headReceived(http10: false, connection: Self.none) == .pass)
        #expect(machine.errorCaught(HTTPParserError.invalidChunkSize) == .forward)
        // The decoder repeats the error: passed on once only.
        #expect(machine.errorCaught(HTTPParserError.invalidChunkSize) == .ignore)
        // The answer before it ends as usual; the one to the bad body closes the connection.
        #expect(Self.answer(&machine) == (.write(http10StatusLine: false, connection: nil), .write))
        #expect(Self.answer(&machine) == (.write(http10StatusLine: false, connection: "close"), .writeAndClose))
        #expect(machine.closing)
    }

    @Test func otherErrorsArePassedOnUntilTheConnectionCloses() {
        struct Other: Error {}
        var machine = Machine()
        #expect(machine.errorCaught(Other()) == .forward)
        _ = Self.request(&machine, connection: Self.close)
        _ = Self.answer(&machine)
        #expect(machine.errorCaught(Other()) == .ignore)
    }

    @Test func anAnswerWithNoRequestDueIsWrittenAsItIs() {
        var machine = Machine()
        #expect(Self.answer(&machine) == (.write(http10StatusLine: false, connection: nil), .write))
        #expect(!machine.closing)
    }
}

extension HTTP1ConnectionHandler.StateMachine.ReadAction {
    /// What the rest of a request passed on so gets.
    var passedOn: Self { self == .drop ? .drop : .pass }
}
