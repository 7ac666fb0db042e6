import Hummingbird
import NIOCore
import PrefsKit

/// Reading the parts of a request the routes share: the key in the path, `scope`, flags, bodies.
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
}

extension RequestContext {
    /// The `{key}` path parameter, validated.
    func key() throws -> String {
        let key = parameters.get("key") ?? ""
        try KeyName.validate(key)
        return key
    }
}
