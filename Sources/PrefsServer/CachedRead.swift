import HTTPTypes
import PrefsKit

/// The answer to a plain read, `GET /v1/prefs/{key}[?scope=…]`, from the store's memory: the
/// exact JSON body the route would send.
///
/// Only the plain form: another method or path, other query parameters, a key or scope that is
/// not valid (so that the router words the error), a body, or a `Connection` header other than
/// `close` gives no answer, and the request is the router's.
enum CachedRead {
    /// The JSON body answering `request`, and whether to close the connection after it; nil to
    /// leave the request to the router.
    static func answer(to request: HTTPRequest, from store: any ImmediateResolving) -> (body: String, close: Bool)? {
        guard request.method == .get, let path = request.path, !request.hasBody else { return nil }
        return answer(toPath: path, connection: request.headerFields[.connection], from: store)
    }

    /// The JSON body answering a GET of `path` with that `Connection` header, and whether to
    /// close the connection after it; nil to leave the request to the router.
    static func answer(toPath path: String, connection: String?, from store: any ImmediateResolving)
        -> (body: String, close: Bool)?
    {
        guard let (key, scope, close) = plainTarget(path, connection: connection),
            let body = store.resolveNow(key, scope: scope, explain: false).compactWireJSON
        else { return nil }
        return (body, close)
    }

    /// The key and scope of a plain `/v1/prefs/KEY[?scope=S]` target — a valid key, a valid scope,
    /// no other parameter — and whether the `Connection` header asks to close; nil for anything
    /// else, which the router words.
    static func plainTarget(_ path: String, connection: String?) -> (key: String, scope: ScopePath, close: Bool)? {
        let connection = connection?.lowercased()
        guard path.hasPrefix("/v1/prefs/"), connection == nil || connection == "close" else { return nil }
        let target = path.utf8.dropFirst("/v1/prefs/".utf8.count)
        let key: Substring.UTF8View
        var scopeText = "/"
        if let question = target.firstIndex(of: UInt8(ascii: "?")) {
            key = target[..<question]
            let query = target[target.index(after: question)...]
            guard query.starts(with: "scope=".utf8), let decoded = percentDecoded(query.dropFirst("scope=".utf8.count))
            else { return nil }
            scopeText = decoded
        } else {
            key = target
        }
        let keyText = String(Substring(key))
        guard (try? KeyName.validate(keyText)) != nil, let scope = try? ScopePath(scopeText) else { return nil }
        return (keyText, scope, connection == "close")
    }

    /// A query value with `%XX` decoded; nil for anything the router might read otherwise
    /// (`&`, `+`, `=`, a bad escape, bytes that are not UTF-8).
    private static func percentDecoded(_ text: Substring.UTF8View.SubSequence) -> String? {
        var bytes: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let byte = text[index]
            switch byte {
            case UInt8(ascii: "&"), UInt8(ascii: "+"), UInt8(ascii: "="), UInt8(ascii: "#"):
                return nil
            case UInt8(ascii: "%"):
                let high = text.index(after: index)
                guard high < text.endIndex, text.index(after: high) < text.endIndex,
                    let value = UInt8(String(decoding: [text[high], text[text.index(after: high)]], as: UTF8.self), radix: 16)
                else { return nil }
                bytes.append(value)
                index = text.index(high, offsetBy: 2)
                continue
            default:
                bytes.append(byte)
            }
            index = text.index(after: index)
        }
        return String(validating: bytes, as: UTF8.self)
    }
}

extension HTTPRequest {
    /// Whether the head announces a body (`Content-Length` or `Transfer-Encoding`).
    var hasBody: Bool {
        headerFields[.contentLength] != nil || headerFields[.transferEncoding] != nil
    }
}
