import Foundation
@testable import PrefsEngine
import PrefsKit
import Testing

/// ``FetchedBytes``: a fetch's bytes relayed to the read that asked for them, the last piece held
/// back until the fetch has them all and they hash right, the fetch held to a few unread pieces,
/// and going on alone once the read closes.
@Suite struct FetchedBytesTests {
    /// A fetch's bytes, given piece by piece by the test.
    static func source() -> (bytes: AsyncThrowingStream<Data, any Error>, pieces: AsyncThrowingStream<Data, any Error>.Continuation) {
        let (bytes, pieces) = AsyncThrowingStream<Data, any Error>.makeStream()
        return (bytes, pieces)
    }

    static func piece(_ byte: UInt8) -> Data { Data(repeating: byte, count: 3) }

    @Test func theLastPieceWaitsForTheBytesToHashRight() async throws {
        let relayed = FetchedBytes()
        let (bytes, pieces) = Self.source()
        let fetch = Task {
            var taken: [Data] = []
            for try await piece in await relayed.relaying(bytes) { taken.append(piece) }
            return taken
        }
        for byte in UInt8(1)...3 { pieces.yield(Self.piece(byte)) }
        pieces.finish()
        try await relayed.started()
        #expect(try await relayed.next() == Self.piece(1))
        #expect(try await relayed.next() == Self.piece(2))
        #expect(try await fetch.value.count == 3, "the fetch took every piece")
        // The third is all the read has left: it comes once the fetch says the bytes hash right
        // (that it waits for it, the next test shows: a fetch that fails keeps it back).
        let last = Task { try await relayed.next() }
        await relayed.hashedRight()
        #expect(try await last.value == Self.piece(3))
        #expect(try await relayed.next() == nil)
    }

    /// A fetch that has relayed two pieces, both unread, and taken its source to its end.
    static func fetchedTwoPieces() async throws -> FetchedBytes {
        let relayed = FetchedBytes()
        let (bytes, pieces) = Self.source()
        let fetch = Task { for try await _ in await relayed.relaying(bytes) {} }
        pieces.yield(Self.piece(1))
        pieces.yield(Self.piece(2))
        pieces.finish()
        try await fetch.value
        return relayed
    }

    @Test func aStoreThatFailsAfterTheBytesHashedRightDoesNotUndoTheRead() async throws {
        let relayed = try await Self.fetchedTwoPieces()
        await relayed.hashedRight()
        await relayed.finish(.failure(PrefsError(.unavailable, "the disk is full")))
        #expect(try await relayed.next() == Self.piece(1))
        #expect(try await relayed.next() == Self.piece(2))
        #expect(try await relayed.next() == nil)
    }

    @Test func aFetchThatFailsEndsTheReadWithItsErrorBeforeTheLastPiece() async throws {
        let relayed = try await Self.fetchedTwoPieces()
        #expect(try await relayed.next() == Self.piece(1))
        await relayed.finish(.failure(PrefsError(.digestMismatch, "not its bytes")))
        await #expect(throws: PrefsError.self) { try await relayed.next() }
    }

    @Test func aFetchThatFailsBeforeAnyPieceFailsItsStart() async throws {
        let relayed = FetchedBytes()
        await relayed.finish(.failure(PrefsError(.unreachable, "offline")))
        do {
            try await relayed.started()
            Issue.record("a fetch that never began started")
        } catch let error as PrefsError {
            #expect(error.code == .unreachable)
        }
    }

    @Test func theFetchWaitsForASlowReadAndGoesOnOnceItCloses() async throws {
        let relayed = FetchedBytes()
        let (bytes, pieces) = Self.source()
        let count = 20
        for byte in 0..<count { pieces.yield(Self.piece(UInt8(byte))) }
        pieces.finish()
        let taken = TakenCount()
        let fetch = Task {
            for try await _ in await relayed.relaying(bytes) { await taken.add() }
        }
        // The fetch takes pieces until four wait unread, the fourth still being passed on.
        let deadline = ContinuousClock.now + .seconds(10)
        while await taken.value < 3, ContinuousClock.now < deadline { await Task.yield() }
        #expect(await taken.value == 3, "the fetch waits while the read has pieces unread")
        #expect(try await relayed.next() == Self.piece(0))
        relayed.close()
        try await fetch.value
        #expect(await taken.value == count, "and goes on alone once the read has closed")
    }

    /// A count the fetch's task adds to.
    actor TakenCount {
        private(set) var value = 0
        func add() { value += 1 }
    }
}
