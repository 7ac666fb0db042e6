import PrefsEngine
import PrefsKit
import Testing

/// Requests under an `Idempotency-Key`: the engine stores each one's outcome with its changes, so
/// that a repeat gets that outcome and changes nothing, and the key cannot serve another request.
@Suite("Engine: idempotent requests")
struct EngineIdempotencyTests {
    /// `body`, as the request the server sends under `key`, `fingerprint` standing for its method,
    /// target and body. (The one place these tests say how a request's key reaches the engine.)
    private static func request<T>(_ key: String, _ fingerprint: String, _ body: () async throws -> T) async throws -> T {
        try await IdempotentRequest.$current.withValue(try IdempotentRequest(key: key, fingerprint: fingerprint), operation: body)
    }

    @Test("A repeat answers the first outcome and changes nothing, though the key has changed since")
    func repeatAnswersTheFirstOutcome() async throws {
        try await withEngine(on: SharedMemoryStorage()) { engine in
            let first = try await Self.request("key-1", "PUT a=1") { try await engine.set("a", to: 1) }
            try await engine.set("a", to: 5)
            let repeated = try await Self.request("key-1", "PUT a=1") { try await engine.set("a", to: 1) }
            #expect(repeated == first)
            #expect(try await engine.resolve("a").value == 5)
            #expect(try await engine.status().revision == 2)
        }
    }

    @Test("A refusal is an outcome too: its repeat is refused the same way, even once the request would pass")
    func repeatOfARefusal() async throws {
        try await withEngine(on: SharedMemoryStorage()) { engine in
            try await engine.set("a", to: 1)
            let conditional = { try await engine.set("a", to: 2, scope: .root, ifRevision: 2) }
            let first = await #expect(throws: PrefsError.self) { try await Self.request("key-1", "PUT a if 2", conditional) }
            #expect(first?.code == .staleRevision)
            try await engine.set("a", to: 3)  // revision 2: the condition holds now
            let repeated = await #expect(throws: PrefsError.self) { try await Self.request("key-1", "PUT a if 2", conditional) }
            #expect(repeated?.code == .staleRevision)
            #expect(try await engine.resolve("a").value == 3)
        }
    }

    @Test("The same key with another request is refused, and changes nothing")
    func keyReused() async throws {
        try await withEngine(on: SharedMemoryStorage()) { engine in
            _ = try await Self.request("key-1", "PUT a=1") { try await engine.set("a", to: 1) }
            let reused = await #expect(throws: PrefsError.self) {
                try await Self.request("key-1", "PUT a=2") { try await engine.set("a", to: 2) }
            }
            #expect(reused?.code == .idempotencyKeyReused)
            #expect(try await engine.resolve("a").value == 1)
            #expect(try await engine.status().revision == 1)
        }
    }

    @Test("A token's creation is not answered again: its secret was in the lost answer only")
    func tokenCreationRepeated() async throws {
        try await withEngine(on: SharedMemoryStorage()) { engine in
            let created = try await Self.request("key-1", "POST ci") {
                try await engine.createToken(named: "ci", role: .reader, scope: .root)
            }
            let repeated = await #expect(throws: PrefsError.self) {
                try await Self.request("key-1", "POST ci") { try await engine.createToken(named: "ci", role: .reader, scope: .root) }
            }
            #expect(repeated?.code == .conflict)
            #expect(repeated?.message.contains("at revision \(created.revision)") == true)
            #expect(try await engine.tokens().count == 1)
            #expect(try await engine.status().revision == created.revision)
        }
    }
}
