import Foundation
import Hummingbird
import NIOCore
import PrefsKit

/// Reading the parts of a request the routes share: the key in the path, `scope`, flags, ids,
/// revisions, bodies.
extension Request {
    /// The `scope` query parameter as a ``ScopePath``; `/` when absent.
    func scope() throws -> ScopePath {
        try ScopePath(uri.queryParameters.get("scope") ?? "/")
    }

    /// Whether a flag such as `explain=1` or `recursive=true` is set.
    func flag(_ name: String) throws -> Bool {
        guard let value = uri.queryParameters.get(name) else { return false }
        switch value {
        case "", "1", "true", "yes": return true
        case "0", "false", "no": return false
        default: throw PrefsError(.invalidRequest, "'\(name)' takes 1 or 0, not '\(value)'.")
        }
    }

    /// An integer query parameter.
    func integer(_ name: String) throws -> Int64? {
        guard let text = uri.queryParameters.get(name) else { return nil }
        guard let value = Int64(text), value >= 0 else {
            throw PrefsError(.invalidRequest, "'\(name)' takes a whole number ≥ 0, not '\(text)'.")
        }
        return value
    }

    /// An id query parameter (`draft=`), refused with `invalid_request` if it is not a UUID.
    func uuid(_ name: String) throws -> UUID? {
        try uri.queryParameters.get(name).map { try parseID($0, of: name) }
    }

    /// The draft revision a change is based on: `If-Match: 7`, or the entity-tag form `"7"`;
    /// nil without the header or for `*` (whatever the revision).
    func ifRevision() throws -> Int64? {
        guard let header = headers[.ifMatch]?.trimmingCharacters(in: .whitespaces), header != "*" else { return nil }
        var text = Substring(header)
        if text.count >= 2, text.hasPrefix("\""), text.hasSuffix("\"") { text = text.dropFirst().dropLast() }
        guard let revision = Int64(text), revision >= 0 else {
            throw PrefsError(.invalidRequest, "If-Match takes the draft revision the change is based on, such as 7 or \"7\", not '\(header)'.")
        }
        return revision
    }

    /// The body, refusing more than `limit` bytes with `too_large`.
    mutating func collectBody(upTo limit: Int) async throws -> ByteBuffer {
        do {
            return try await body.collect(upTo: limit)
        } catch let error as HTTPError where error.status == .contentTooLarge {
            throw PrefsError(.tooLarge, "The request body is over the limit of \(limit) bytes; nothing was changed.")
        } catch is NIOTooManyBytesError {
            throw PrefsError(.tooLarge, "The request body is over the limit of \(limit) bytes; nothing was changed.")
        }
    }

    /// The JSON body as `type`, refusing more than `limit` bytes; `what` names the expected shape
    /// in the error.
    mutating func decodeJSONBody<T: Decodable>(_ type: T.Type, upTo limit: Int, what: String) async throws -> T {
        try JSONCoding.decode(type, from: try await collectBody(upTo: limit), what: what)
    }

    /// The body as it arrives, for a consumer that streams it (an upload). Each buffer is read
    /// from the connection only when the consumer asks for it, so a slow consumer slows the
    /// sender down instead of the body piling up in memory.
    func bodyStream() -> AsyncThrowingStream<Data, any Error> {
        let reader = RequestBodyReader(body)
        return AsyncThrowingStream { try await reader.next() }
    }
}

/// Pulls a request body one buffer at a time, on behalf of ``Request/bodyStream()``.
private actor RequestBodyReader {
    private var buffers: RequestBody.AsyncIterator

    init(_ body: RequestBody) {
        buffers = body.makeAsyncIterator()
    }

    func next() async throws -> Data? {
        // An actor's stored iterator cannot be advanced in place across a suspension.
        var iterator = buffers
        defer { buffers = iterator }
        return try await iterator.next(isolation: self).map { Data($0.readableBytesView) }
    }
}

extension RequestContext {
    /// The `{key}` path parameter, validated.
    func key() throws -> String {
        let key = parameters.get("key") ?? ""
        try KeyName.validate(key)
        return key
    }

    /// An id path parameter (`{draft}`, `{attachment}`), refused with `invalid_request` if it is
    /// not a UUID.
    func uuid(_ name: String) throws -> UUID {
        try parseID(parameters.get(name) ?? "", of: name)
    }
}

/// A draft or attachment id given as text.
private func parseID(_ text: String, of name: String) throws -> UUID {
    guard let id = UUID(uuidString: text) else {
        throw PrefsError(.invalidRequest, "'\(text)' is not a \(name) id: ids are UUIDs, such as 3F2504E0-4F89-11D3-9A0C-0305E82C3301.")
    }
    return id
}
