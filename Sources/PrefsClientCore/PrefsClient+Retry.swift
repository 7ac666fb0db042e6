import Foundation
import PrefsKit

/// Writes that are safe to send again: every write carries an `Idempotency-Key`, and one whose
/// answer was lost is sent again with the same key — the daemon stores each keyed write's outcome
/// with the write itself, so a repeat gets that outcome and changes nothing.
extension PrefsClient {
    /// The header that makes a write safe to repeat.
    static let idempotencyKeyHeader = "Idempotency-Key"

    /// Sends `spec` and returns its answer.
    ///
    /// A read goes once. A write goes with an `Idempotency-Key` (a new one, a version 7 UUID from
    /// `IdempotencyKey`, unless `spec` has one); if the connection is lost after it went out
    /// (``UnansweredRequest``: the daemon was killed or restarted), or the daemon answers that the
    /// same request is still in progress (`request_in_progress`) or that it could not learn its
    /// outcome (`outcome_unknown`), it is sent again with the same key, after a pause that doubles
    /// up to a second, until an answer comes or ``writeRetryDeadline`` has passed — then it throws
    /// `outcome_unknown`. A write that could not be sent at all (no daemon) fails at once,
    /// `unreachable`.
    ///
    /// `send` sends one try; `body`, when the request streams one, makes its bytes anew for each
    /// try (nil: they cannot be made again, and a lost answer is `outcome_unknown` at once).
    func exchange(
        _ spec: HTTPRequestSpec, repeatable: Bool = true,
        send: (HTTPRequestSpec) async throws -> HTTPResponseData
    ) async throws -> HTTPResponseData {
        guard spec.method != "GET" else {
            do {
                return try await send(spec)
            } catch let unanswered as UnansweredRequest {
                throw unanswered.cause
            }
        }
        var spec = spec
        if !spec.headers.contains(where: { $0.0.lowercased() == Self.idempotencyKeyHeader.lowercased() }) {
            spec.headers.append((Self.idempotencyKeyHeader, IdempotencyKey.make()))
        }
        // Who and why, for the change log.
        spec.headers.append(("User-Agent", userAgent))
        if let reason = ChangeOrigin.current?.reason {
            spec.headers.append(("Prefs-Reason", Self.pathSegment(reason)))
        }
        let deadline = ContinuousClock.now + writeRetryDeadline
        var pause = Duration.milliseconds(50)
        var sent = false
        while true {
            let problem: PrefsError
            do {
                let response = try await send(spec)
                guard let repeatable = Self.repeatable(response) else { return response }
                problem = repeatable
            } catch let unanswered as UnansweredRequest {
                guard repeatable else { throw Self.outcomeUnknown(spec, unanswered.cause, tried: .zero) }
                problem = unanswered.cause
                sent = true
            } catch let error as PrefsError where error.code == .unreachable && sent {
                // The daemon is restarting after the request went out: keep trying.
                problem = error
            }
            guard ContinuousClock.now + pause < deadline else {
                throw Self.outcomeUnknown(spec, problem, tried: writeRetryDeadline)
            }
            try await Task.sleep(for: pause)
            pause = min(pause * 2, .seconds(1))
        }
    }

    /// Why an answer calls for sending the request again, if it does: the same request is still
    /// in progress, or the daemon could not learn what became of it.
    private static func repeatable(_ response: HTTPResponseData) -> PrefsError? {
        guard response.status == 409 || response.status == 503 else { return nil }
        let error = error(status: response.status, body: response.body)
        return error.code == .requestInProgress || error.code == .outcomeUnknown ? error : nil
    }

    /// The error of a write whose outcome could not be learnt.
    private static func outcomeUnknown(_ spec: HTTPRequestSpec, _ cause: PrefsError, tried: Duration) -> PrefsError {
        let key = spec.headers.first { $0.0 == idempotencyKeyHeader }?.1 ?? ""
        let tries = tried > .zero ? ", and sent again with the same Idempotency-Key (\(key)) for \(tried.components.seconds) s" : ""
        return PrefsError(
            .outcomeUnknown,
            "\(spec.method) \(spec.path) went out but its answer was lost (\(cause.message))\(tries); "
                + "it may or may not have been stored. Read it back to check (`prefsctl get KEY`, `prefsctl drafts show ID`), "
                + "or send it again with Idempotency-Key \(key).")
    }
}

extension HTTPRequestSpec {
    /// The target's path, without the query.
    var path: Substring {
        target[..<(target.firstIndex(of: "?") ?? target.endIndex)]
    }
}
