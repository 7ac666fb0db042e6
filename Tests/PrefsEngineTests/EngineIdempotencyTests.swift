import PrefsEngine
import PrefsKit
import Testing

/// Requests under an `Idempotency-Key`: the engine stores each one's outcome with its changes, so
/// that a repeat gets that outcome and changes nothing, and the key cannot serve another request.
@Suite("Engine: idempotent requests")
struct EngineIdempotencyTests {
    /// The context of a request the server sends under `key`, `fingerprint` standing for its
    /// method, target and body.
    private static func keyed(_ key: String, _ fingerprint: String) throws -> WriteContext {
        WriteContext(idempotency: try IdempotentRequest(key: key, fingerprint: fingerprint))
    }

    /// Sets `a` to `value` in `context`, `ifRevision` the key's revision.
    private static func setA(
        _ engine: PrefsEngine<SharedMemoryStorage>, _ value: JSONValue, ifRevision: Revision? = nil, _ context: WriteContext
    ) async throws -> WriteResult {
        try await engine.set(KeyName("a"), to: value, scope: .root, ifRevision: ifRevision, context: context)
    }

    @Test("A repeat answers the first outcome and changes nothing, though the key has changed since")
    func repeatAnswersTheFirstOutcome() async throws {
        try await withEngine(on: SharedMemoryStorage()) { engine in
            let first = try await Self.setA(engine, 1, Self.keyed("key-1", "PUT a=1"))
            try await engine.set("a", to: 5)
            let repeated = try await Self.setA(engine, 1, Self.keyed("key-1", "PUT a=1"))
            #expect(repeated == first)
            #expect(try await engine.resolve("a").value == 5)
            #expect(try await engine.status().revision == 2)
        }
    }

    @Test("A refusal is an outcome too: its repeat is refused the same way, even once the request would pass")
    func repeatOfARefusal() async throws {
        try await withEngine(on: SharedMemoryStorage()) { engine in
            try await engine.set("a", to: 1)
            let conditional = { try await Self.setA(engine, 2, ifRevision: 2, Self.keyed("key-1", "PUT a if 2")) }
            let first = await #expect(throws: PrefsError.self) { try await conditional() }
            #expect(first?.code == .staleRevision)
            try await engine.set("a", to: 3)  // revision 2: the condition holds now
            let repeated = await #expect(throws: PrefsError.self) { try await conditional() }
            #expect(repeated?.code == .staleRevision)
            #expect(try await engine.resolve("a").value == 3)
        }
    }

    @Test("The same key with another request is refused, and changes nothing")
    func keyReused() async throws {
        try await withEngine(on: SharedMemoryStorage()) { engine in
            _ = try await Self.setA(engine, 1, Self.keyed("key-1", "PUT a=1"))
            let reused = await #expect(throws: PrefsError.self) { try await Self.setA(engine, 2, Self.keyed("key-1", "PUT a=2")) }
            #expect(reused?.code == .idempotencyKeyReused)
            #expect(try await engine.resolve("a").value == 1)
            #expect(try await engine.status().revision == 1)
        }
    }

    @Test("A token's creation is not answered again: its secret was in the lost answer only")
    func tokenCreationRepeated() async throws {
        try await withEngine(on: SharedMemoryStorage()) { engine in
            let created = try await engine.createToken(named: "ci", role: .reader, scope: .root, context: Self.keyed("key-1", "POST ci"))
            let repeated = await #expect(throws: PrefsError.self) {
                try await engine.createToken(named: "ci", role: .reader, scope: .root, context: Self.keyed("key-1", "POST ci"))
            }
            #expect(repeated?.code == .conflict)
            #expect(repeated?.message.contains("at revision \(created.revision)") == true)
            #expect(try await engine.tokens().count == 1)
            #expect(try await engine.status().revision == created.revision)
        }
    }
}
