import Crypto
import Foundation
import HTTPTypes
import NIOCore
import PrefsEngine
import PrefsKit

/// A request as every endpoint reads it, whichever listener and path carried it: its method,
/// its path's parameters and query, its header fields and its body.
struct EndpointRequest: Sendable {
    /// The request's method.
    let method: HTTPRequest.Method
    /// The request target as sent: path and query, still percent-encoded.
    let target: String
    /// The header fields.
    let headers: RequestHeaders
    /// The query's items, parsed when the request is routed (``parseTarget()``): an answer the
    /// memo keeps needs none.
    private(set) var query = QueryItems()
    /// The endpoint's path parameters by name, percent-decoded (filled in by ``API``).
    var parameters = PathParameters()
    /// The body, when the endpoint reads it whole.
    var body: ByteBuffer?
    /// The body as it arrives, when the endpoint streams it (an upload).
    var bodyStream: AsyncThrowingStream<Data, any Error>?
    /// Whether a write may commit on the thread that carries the request: the connection is
    /// alone on its event loop (``EventLoopOccupancy``), so a commit there holds back no other.
    var commitsHere = false
    /// When the request was taken in: its latency is counted from here.
    let received = ContinuousClock.now
    /// The connection that carried it, whose peer its changes are by.
    var connection: ObjectIdentifier?
    /// Who sent it, as its listener found out (``API`` fills it in before routing): nil for a
    /// request to an endpoint that needs no token (``Endpoint/anonymous``) that carries none.
    var caller: Caller?
    /// What it may do: nil permits nothing.
    var grant: AccessGrant? { caller?.grant }
    /// The context its writes are made in: who makes them and why, where the engine records it
    /// (``origin(author:)``), and its `Idempotency-Key` (``idempotency()``). ``API`` fills it in
    /// before the endpoint runs, which passes it to every write it asks of the engine.
    var writeContext = WriteContext()
    /// The least role its endpoint needs (``API`` fills it in): the role ``scope()`` checks.
    var role = AccessRole.admin

    /// A request for `target` by `method`, with `headers`.
    init(method: HTTPRequest.Method, target: String, headers: RequestHeaders) {
        self.method = method
        self.target = target
        self.headers = headers
    }

    /// The target's path, without the query.
    var path: Substring {
        target[..<(target.utf8.firstIndex(of: UInt8(ascii: "?")) ?? target.endIndex)]
    }

    /// Reads the query's items into ``query``, and returns the path's segments, percent-decoded;
    /// nil if one does not decode to UTF-8.
    mutating func parseTarget() -> [String]? {
        var text = target
        return text.withUTF8 { bytes in
            let pathEnd = bytes.firstIndex(of: UInt8(ascii: "?")) ?? bytes.endIndex
            query = QueryItems(UnsafeBufferPointer(rebasing: bytes[min(pathEnd + 1, bytes.endIndex)...]))
            var segments: [String] = []
            segments.reserveCapacity(bytes[..<pathEnd].count { $0 == UInt8(ascii: "/") })
            var start = 0
            for end in 0...pathEnd where end == pathEnd || bytes[end] == UInt8(ascii: "/") {
                if end > start {
                    guard let decoded = QueryItems.percentDecoded(UnsafeBufferPointer(rebasing: bytes[start..<end])) else { return nil }
                    segments.append(decoded)
                }
                start = end + 1
            }
            return segments
        }
    }

    // MARK: Parameters

    /// The `{key}` path parameter, validated.
    func key() throws -> KeyName {
        try KeyName(parameters["key"] ?? "")
    }

    /// A path parameter that names a draft or an attachment, refused with `invalid_request` if it
    /// is not a UUID.
    func id(_ name: String) throws -> UUID {
        try Self.parseID(parameters[name] ?? "", of: name)
    }

    /// The `scope` query item as a ``ScopePath``; `/` when absent. `forbidden` unless the
    /// request's grant has the endpoint's role there.
    func scope() throws -> ScopePath {
        let scope = try ScopePath(query["scope"] ?? "/")
        try checkAccess(role, at: scope)
        return scope
    }

    /// Throws `forbidden` unless the request's grant has `role` at `scope`.
    func checkAccess(_ role: AccessRole, at scope: ScopePath) throws {
        try access().check(role, at: scope, for: action)
    }

    /// Throws `forbidden` unless the request's grant has `role` over the drafts of `account`.
    func checkAccess(_ role: AccessRole, account: String) throws {
        try access().check(role, account: account, for: "\(action) on the drafts of \(account)")
    }

    /// The request's grant; `forbidden` without one.
    func access() throws -> AccessGrant {
        guard let grant else { throw PrefsError(.forbidden, "\(action) was not let through: no one's access was found.") }
        return grant
    }

    /// What the request does, as messages name it: `PUT /v1/prefs/a.b`.
    var action: String { "\(method.rawValue) \(path)" }

    /// Whether a flag such as `explain=1` or `recursive=true` is set.
    func flag(_ name: String) throws -> Bool {
        guard let value = query[name] else { return false }
        switch value {
        case "", "1", "true", "yes": return true
        case "0", "false", "no": return false
        default: throw PrefsError(.invalidRequest, "'\(name)' takes 1 or 0, not '\(value)'.")
        }
    }

    /// A whole number ≥ 0 in the query.
    func integer(_ name: String) throws -> Int64? {
        guard let text = query[name] else { return nil }
        guard let value = Int64(text), value >= 0 else {
            throw PrefsError(.invalidRequest, "'\(name)' takes a whole number ≥ 0, not '\(text)'.")
        }
        return value
    }

    /// An id in the query (`draft=`), refused with `invalid_request` if it is not a UUID.
    func queryID(_ name: String) throws -> UUID? {
        try query[name].map { try Self.parseID($0, of: name) }
    }

    /// The revision a change is based on (a draft's, or a key's at a scope): `If-Match: 7`, or
    /// the entity-tag form `"7"` that a read's `ETag` gives; nil without the header or for `*`
    /// (whatever the revision: the resource always has a current representation).
    func ifRevision() throws -> Int64? {
        guard let header = headers[.ifMatch]?.trimmingCharacters(in: .whitespaces), header != "*" else { return nil }
        var text = Substring(header)
        if text.count >= 2, text.hasPrefix("\""), text.hasSuffix("\"") { text = text.dropFirst().dropLast() }
        guard let revision = Int64(text), revision >= 0 else {
            throw PrefsError(
                .invalidRequest, "If-Match takes the revision the change is based on, such as 7 or \"7\", or *, not '\(header)'.")
        }
        return revision
    }

    /// The context the request's writes are made in: empty for a read; for a write, its
    /// `Idempotency-Key` (``idempotency()``) and, where the engine records authors, who makes it
    /// (`author` works it out) and why (``origin(author:)``).
    func writeContext(recordingAuthors: Bool, author: (EndpointRequest) -> ChangeAuthor) throws -> WriteContext {
        guard method != .get, method != .head else { return WriteContext() }
        return WriteContext(
            origin: recordingAuthors ? try origin(author: author) : ChangeOrigin(), idempotency: try idempotency())
    }

    /// The request's `Idempotency-Key`, with a fingerprint of what the request asks for: its
    /// method, target, `If-Match` and body — or, for a body streamed to the service (an upload),
    /// its type and length, the bytes being read only as they are stored. Nil for a write
    /// without the header.
    private func idempotency() throws -> IdempotentRequest? {
        guard let key = headers[Self.idempotencyKey] else { return nil }
        var hasher = SHA256()
        /// Hashes `part`, then a NUL that ends it.
        func hash(_ part: String) {
            var part = part
            part.withUTF8 { hasher.update(bufferPointer: UnsafeRawBufferPointer($0)) }
            withUnsafeBytes(of: UInt8(0)) { hasher.update(bufferPointer: $0) }
        }
        hash(method.rawValue)
        hash(target)
        hash(headers[.ifMatch] ?? "")
        if let body {
            body.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
        } else {
            hash(headers[.contentType] ?? "")
            hash(headers[.contentLength] ?? "")
        }
        let fingerprint = hasher.finalize().withUnsafeBytes { $0.lowercaseHex }
        return try IdempotentRequest(key: key, fingerprint: fingerprint)
    }

    /// The header that makes a write safe to repeat.
    static let idempotencyKey = HTTPField.Name("Idempotency-Key")!

    /// Who makes a write's changes (`author` works it out) and why (`Prefs-Reason`,
    /// percent-encoded UTF-8).
    private func origin(author: (EndpointRequest) -> ChangeAuthor) throws -> ChangeOrigin {
        var reason: String?
        if var header = headers[Self.reason] {
            guard let decoded = header.withUTF8(QueryItems.percentDecoded) else {
                throw PrefsError(.invalidRequest, "Prefs-Reason takes percent-encoded UTF-8, not '\(header.prefix(60))'.")
            }
            try ChangeOrigin.checkReason(decoded)
            reason = decoded
        }
        return ChangeOrigin(author: author(self), reason: reason)
    }

    /// The header that says why a write is made.
    static let reason = HTTPField.Name("Prefs-Reason")!

    /// The body as `type`, every number exactly; `what` names the expected shape in the error.
    func decodeBody<T: Decodable>(_ type: T.Type, what: String) throws -> T {
        try JSONCoding.decode(type, from: body ?? ByteBuffer(), what: what)
    }

    /// A draft or attachment id given as text.
    private static func parseID(_ text: String, of name: String) throws -> UUID {
        guard let id = UUID(uuidString: text) else {
            throw PrefsError(
                .invalidRequest, "'\(text)' is not a \(name) id: ids are UUIDs, such as 3F2504E0-4F89-11D3-9A0C-0305E82C3301.")
        }
        return id
    }
}
