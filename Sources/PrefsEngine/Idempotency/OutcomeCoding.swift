import Foundation
import PrefsKit

/// How a request's outcome is kept under its `Idempotency-Key` (``StoredOutcome/body``) and read
/// back: a write's answer as the API's JSON (``WriteResult`` written directly, as every write
/// answers), a refusal as its error body.
enum OutcomeCoding {
    /// `answer` as stored. Every write of the engine answers a `Codable` value.
    static func encode<T>(_ answer: T) throws -> String {
        if let result = answer as? WriteResult { return result.wireJSON }
        guard let answer = answer as? any Encodable else { throw notCodable(T.self) }
        return String(decoding: try WireJSON.encoder().encode(answer), as: UTF8.self)
    }

    /// `refusal` as stored.
    static func encode(refusal: PrefsError) throws -> String {
        String(decoding: try WireJSON.encoder().encode(ErrorBody(refusal)), as: UTF8.self)
    }

    /// The outcome stored: the answer, its revisions moved as the storage moved its batch's, or
    /// the refusal.
    static func decode<T>(_ type: T.Type, from outcome: StoredOutcome) -> Result<T, any Error> {
        let data = Data(outcome.body.utf8)
        do {
            if outcome.refused {
                let refusal = try WireJSON.decode(ErrorBody.self, from: data)
                return .failure(refusal.prefsError(httpStatus: 400))
            }
            guard let decodable = T.self as? any Decodable.Type, let answer = try WireJSON.decode(decodable, from: data) as? T else {
                throw notCodable(T.self)
            }
            return .success(RevisionShift(base: outcome.baseRevision, shift: outcome.shift).apply(to: answer))
        } catch {
            return .failure(PrefsError(.internal, "The outcome stored under Idempotency-Key '\(outcome.key)' cannot be read: \(error)"))
        }
    }

    /// The error of an answer that cannot be stored: a bug, never a client's mistake.
    private static func notCodable(_ type: Any.Type) -> PrefsError {
        PrefsError(.internal, "A write answering \(type), which is not Codable, cannot be made idempotent.")
    }
}
