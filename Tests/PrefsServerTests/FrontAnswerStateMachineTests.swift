import HTTPTypes
import NIOCore
import PrefsEngine
import Testing

@testable import PrefsServer

/// ``FrontAnswerHandler/StateMachine`` driven directly, without a channel: every state, what
/// each event returns there, and the late or illegal ones — bytes after the connection closes, a
/// second request while one is answered, the client closing during a watch or an answer.
@Suite struct FrontAnswerStateMachineTests {
    typealias Machine = FrontAnswerHandler.StateMachine

    /// A watch whose ends are counted.
    final class Feed: WatchFeed, @unchecked Sendable {
        // Unchecked: the tests touch it from one thread only.
        var ended = 0
        func wakeWhenReady(_ onReady: @escaping @Sendable () -> Void) {}
        func poll() -> WatchFeedItem { ended > 0 ? .ended(nil) : .waiting }
        func end() { ended += 1 }
    }

    static let get = "GET /v1/prefs/a HTTP/1.1\r\nHost: x\r\n\r\n"
    static let put = "PUT /v1/prefs/a HTTP/1.1\r\nContent-Length: 2\r\n\r\n42"

    static func bytes(_ text: String) -> ByteBuffer { ByteBuffer(string: text) }

    /// The machine's next request, taken; its head's target and body.
    static func take(_ machine: inout Machine) -> (target: String, body: String?)? {
        guard case .request(let head, let body) = machine.nextRequest(writable: true) else { return nil }
        machine.requestTaken(head)
        return (head.target, body.map { String(buffer: $0) })
    }

    static func isIdle(_ machine: Machine) -> Bool {
        if case .idle = machine.state { return true }
        return false
    }

    static func isClosing(_ machine: Machine) -> Bool {
        if case .closing = machine.state { return true }
        return false
    }

    @Test func takesWholePlainRequestsInOrderAndWaitsForTheRest() throws {
        var machine = Machine(maximumBodyBytes: 1024, methods: .of([.get, .put]))
        #expect(Self.isIdle(machine))
        // A head in two reads: nothing until it is whole.
        #expect(machine.received(Self.bytes("GET /v1/prefs/a HTTP/1.1\r\n")) == .answer)
        guard case .none = machine.nextRequest(writable: true) else { Issue.record("took half a head"); return }
        #expect(machine.received(Self.bytes("Host: x\r\n\r\n" + Self.put.dropLast())) == .answer)
        #expect(Self.take(&machine)?.target == "/v1/prefs/a")
        // The PUT's body is one byte short.
        guard case .none = machine.nextRequest(writable: true) else { Issue.record("took half a body"); return }
        #expect(machine.pendingBytes > 0)
        #expect(machine.received(Self.bytes("2")) == .answer)
        let put = try #require(Self.take(&machine))
        #expect(put.body == "42")
        #expect(machine.pendingBytes == 0)
        guard case .none = machine.nextRequest(writable: true) else { Issue.record("took a request from nothing"); return }
    }

    @Test func answersNothingWhileTheConnectionTakesNoMore() {
        var machine = Machine(maximumBodyBytes: 1024, methods: .of([.get, .put]))
        _ = machine.received(Self.bytes(Self.get))
        guard case .none = machine.nextRequest(writable: false) else { Issue.record("answered into a full buffer"); return }
        #expect(machine.read(writable: false) == .hold)
        #expect(machine.readHeld)
        #expect(machine.writable() == .answerPending)
        #expect(Self.take(&machine) != nil)
        #expect(machine.resumeReading() == .read)
        #expect(machine.resumeReading() == .hold)
    }

    @Test("Steps aside for good at a request that is not plain, passing on all it holds", arguments: [
        "GET /v1/prefs/a HTTP/1.0\r\n\r\n", "POST /v1/x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
        "PUT /v1/prefs/a HTTP/1.1\r\nContent-Length: 2048\r\n\r\n", "get / HTTP/1.1\r\n\r\n",
    ])
    func stepsAsideForAnythingNotPlain(request: String) throws {
        var machine = Machine(maximumBodyBytes: 1024, methods: .of([.get, .put]))
        _ = machine.received(Self.bytes(request + Self.get))
        guard case .stepAside(let passing) = machine.nextRequest(writable: true) else {
            Issue.record("answered \(request)")
            return
        }
        #expect(passing.map { String(buffer: $0) } == request + Self.get)
        #expect(machine.isSteppedAside)
        // From now on everything is the decoder's.
        #expect(machine.received(Self.bytes(Self.get)) == .forward)
        #expect(machine.readComplete() == .forward)
        #expect(machine.read(writable: false) == .read)
        #expect(machine.writable() == .none)
        guard case .forward = machine.eventTriggered(ChannelEvent.inputClosed, isInputClosed: true, isQuiesce: false) else {
            Issue.record("kept an event after stepping aside")
            return
        }
        guard case .none = machine.nextRequest(writable: true) else { Issue.record("took a request aside"); return }
        #expect(machine.connectionGone() == nil)
        #expect(machine.isSteppedAside)
    }

    @Test func aHeadTooLongToBePlainGoesToTheDecoder() {
        var machine = Machine(maximumBodyBytes: 1024, methods: .of([.get, .put]))
        _ = machine.received(Self.bytes("GET /" + String(repeating: "a", count: FrontAnswerHandler.maximumHeadBytes)))
        guard case .stepAside = machine.nextRequest(writable: true) else { Issue.record("waited for a long head"); return }
    }

    @Test func aRequestTheEndpointStreamsStepsAsideWithItsOwnBytes() {
        var machine = Machine(maximumBodyBytes: 1024, methods: .of([.get, .put]))
        _ = machine.received(Self.bytes(Self.put + Self.get))
        guard case .request = machine.nextRequest(writable: true) else { Issue.record("no request"); return }
        // The handler routes it to an upload: the request itself goes on.
        #expect(machine.stepAside().map { String(buffer: $0) } == Self.put + Self.get)
    }

    @Test func whatFollowsAPendingAnswerWaitsAndReadingHoldsPastTheLimit() {
        var machine = Machine(maximumBodyBytes: 1024, methods: .of([.get, .put]))
        _ = machine.received(Self.bytes(Self.put))
        #expect(Self.take(&machine) != nil)
        machine.answerStarted(starting: true)
        machine.answerStartReturned()
        #expect(machine.isAnswering)
        // A second request while answering waits; so do events.
        #expect(machine.received(Self.bytes(Self.get)) == .wait)
        guard case .none = machine.nextRequest(writable: true) else { Issue.record("answered out of order"); return }
        guard case .none = machine.eventTriggered(ChannelEvent.inputClosed, isInputClosed: true, isQuiesce: false) else {
            Issue.record("an event overtook the answer")
            return
        }
        guard case .none = machine.eventTriggered(ChannelShouldQuiesceEvent(), isInputClosed: false, isQuiesce: true) else {
            Issue.record("an event overtook the answer")
            return
        }
        #expect(machine.takeHeldEvents() == nil)
        #expect(machine.writable() == .none)
        // Reading goes on until the limit waits behind the answer, and holds even when writable.
        #expect(machine.read(writable: true) == .read)
        _ = machine.received(Self.bytes(String(repeating: "x", count: FrontAnswerHandler.maximumPendingBytes)))
        #expect(machine.read(writable: true) == .hold)
        // The answer comes: it is sent, then what waited is taken up, events in order.
        #expect(machine.answerFinished() == .send(takeUpWaiting: true))
        #expect(Self.isIdle(machine))
        #expect(Self.take(&machine)?.target == "/v1/prefs/a")
        let events = machine.takeHeldEvents()
        #expect(events?.count == 2)
        #expect(events?.first is ChannelEvent)
        #expect(events?.last is ChannelShouldQuiesceEvent)
        #expect(machine.takeHeldEvents()?.isEmpty == true)
        #expect(machine.resumeReading() == .read)
    }

    @Test func anAnswerThatComesWhileStartingLeavesWhatFollowsToTheLoop() {
        var machine = Machine(maximumBodyBytes: 1024, methods: .of([.get, .put]))
        _ = machine.received(Self.bytes(Self.put + Self.get))
        #expect(Self.take(&machine) != nil)
        machine.answerStarted(starting: true)
        #expect(machine.answerFinished() == .send(takeUpWaiting: false))
        machine.answerStartReturned()
        #expect(Self.isIdle(machine))
        #expect(Self.take(&machine)?.target == "/v1/prefs/a")
        // A file being sent is not started by the loop's pending answer: its end takes up what waited.
        machine.answerStarted(starting: false)
        machine.answerStartReturned()
        #expect(machine.answerFinished() == .send(takeUpWaiting: true))
        // A second finish (late) is dropped.
        #expect(machine.answerFinished() == .drop)
    }

    @Test func anAnswerThatComesAfterTheConnectionWentIsDropped() {
        var machine = Machine(maximumBodyBytes: 1024, methods: .of([.get, .put]))
        _ = machine.received(Self.bytes(Self.put + Self.get))
        #expect(Self.take(&machine) != nil)
        machine.answerStarted(starting: false)
        _ = machine.eventTriggered(ChannelShouldQuiesceEvent(), isInputClosed: false, isQuiesce: true)
        #expect(machine.connectionGone() == nil)
        #expect(Self.isClosing(machine))
        #expect(machine.pendingBytes == 0)
        #expect(machine.answerFinished() == .drop)
        #expect(machine.takeHeldEvents()?.isEmpty == true)
        // A read after close is dropped.
        #expect(machine.received(Self.bytes(Self.get)) == .drop)
        guard case .none = machine.nextRequest(writable: true) else { Issue.record("answered after close"); return }
    }

    @Test func aClosingAnswerEndsTheRequestsAndClosesWhenTheClientDoes() {
        var machine = Machine(maximumBodyBytes: 1024, methods: .of([.get, .put]))
        _ = machine.received(Self.bytes(Self.get + Self.get))
        #expect(Self.take(&machine) != nil)
        #expect(machine.read(writable: false) == .hold)
        #expect(machine.closeAfterAnswers() == .read)
        #expect(Self.isClosing(machine))
        #expect(machine.pendingBytes == 0)
        guard case .none = machine.nextRequest(writable: true) else { Issue.record("answered after a close"); return }
        #expect(machine.received(Self.bytes(Self.get)) == .drop)
        #expect(machine.writable() == .answerPending)
        guard case .close(let feed) = machine.eventTriggered(ChannelEvent.inputClosed, isInputClosed: true, isQuiesce: false)
        else {
            Issue.record("did not close when the client did")
            return
        }
        #expect(feed == nil)
    }

    @Test func theServerStoppingStepsAsideWithWhatIsPending() {
        var machine = Machine(maximumBodyBytes: 1024, methods: .of([.get, .put]))
        _ = machine.received(Self.bytes("GET /v1/pr"))
        guard case .stepAsideAndForward(let passing) = machine.eventTriggered(
            ChannelShouldQuiesceEvent(), isInputClosed: false, isQuiesce: true)
        else {
            Issue.record("did not step aside")
            return
        }
        #expect(passing.map { String(buffer: $0) } == "GET /v1/pr")
        #expect(machine.isSteppedAside)
        // In the idle state, the client closing its side closes the connection (no request loop
        // behind would), and other events go on.
        var other = Machine(maximumBodyBytes: 1024, methods: .of([.get, .put]))
        guard case .forward = other.eventTriggered(ChannelEvent.outputClosed, isInputClosed: false, isQuiesce: false) else {
            Issue.record("kept an event with nothing to answer")
            return
        }
        guard case .close(let feed) = other.eventTriggered(ChannelEvent.inputClosed, isInputClosed: true, isQuiesce: false) else {
            Issue.record("did not close when the client did, with nothing to answer")
            return
        }
        #expect(feed == nil)
    }

    @Test func aWatchCarriesNothingElseAndEndsWhenItsClientGoes() {
        var machine = Machine(maximumBodyBytes: 1024, methods: .of([.get, .put]))
        _ = machine.received(Self.bytes(Self.get + Self.get))
        #expect(Self.take(&machine) != nil)
        let feed = Feed()
        machine.watchStarted(feed)
        #expect(machine.feed === feed)
        #expect(machine.pendingBytes == 0)
        #expect(machine.received(Self.bytes(Self.get)) == .drop)
        guard case .none = machine.nextRequest(writable: true) else { Issue.record("answered during a watch"); return }
        #expect(machine.read(writable: false) == .read)
        #expect(machine.readComplete() == .read)
        #expect(machine.writable() == .writeEvents)
        #expect(machine.takeHeldEvents() == nil)
        // The server stopping: the engine ends the watch, the connection closes after its last event.
        guard case .none = machine.eventTriggered(ChannelShouldQuiesceEvent(), isInputClosed: false, isQuiesce: true) else {
            Issue.record("cut a watch off at shutdown")
            return
        }
        #expect(machine.feed === feed)
        guard case .close(let ending) = machine.eventTriggered(ChannelEvent.inputClosed, isInputClosed: true, isQuiesce: false)
        else {
            Issue.record("kept a watch whose client went")
            return
        }
        #expect(ending === feed)
        #expect(machine.feed == nil)
        #expect(Self.isClosing(machine))
    }

    @Test func aWatchThatEndsClosesTheConnectionAndOneGoneEndsItsWatch() {
        var machine = Machine(maximumBodyBytes: 1024, methods: .of([.get, .put]))
        let feed = Feed()
        machine.watchStarted(feed)
        machine.watchEnded()
        #expect(machine.feed == nil)
        #expect(Self.isClosing(machine))
        #expect(machine.connectionGone() == nil)

        var gone = Machine(maximumBodyBytes: 1024, methods: .of([.get, .put]))
        gone.watchStarted(feed)
        #expect(gone.connectionGone() === feed)
        #expect(gone.feed == nil)
        #expect(Self.isClosing(gone))
    }
}

extension PlainMethods {
    /// The methods of a table with an endpoint for each of `methods`.
    static func of(_ methods: [HTTPRequest.Method]) -> PlainMethods {
        PlainMethods(methods.map { Endpoint($0, "/") { _ in .now(.json(ByteBuffer())) } })
    }
}
