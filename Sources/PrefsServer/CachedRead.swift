import HTTPTypes
import PrefsKit

/// The answer to a plain read, `GET /v1/prefs/{key}[?scope=…]`, from the store's memory: the
/// exact JSON body the route would send; and the target of a plain write, `PUT` of the same.
///
/// Only the plain form: another method or path, other query parameters, a key or scope that is
/// not valid (so that the router words the error), or a body gives no answer, and the request is
/// the router's.
enum CachedRead {
    /// The JSON body answering a plain GET of `path`, resolved and rendered now; nil to leave the
    /// request to the router. (``ReadAnswers`` keeps these bodies until the next commit.)
    static func body(forPath path: String, from store: any ImmediateResolving) -> String? {
        guard let (key, scope) = plainTarget(path) else { return nil }
        return store.resolveNow(key, scope: scope, explain: false).compactWireJSON
    }

    /// ``plainTarget(_:)``, and whether the request's `connection` options ask to close the
    /// connection after its answer.
    static func plainTarget(_ path: String, connection: ConnectionOptions) -> (key: String, scope: ScopePath, close: Bool)? {
        guard let (key, scope) = plainTarget(path) else { return nil }
        return (key, scope, connection.close)
    }

    /// The key and scope of a plain `/v1/prefs/KEY[?scope=S]` target — a valid key, a valid scope,
    /// no other parameter; nil for anything else, which the router words.
    static func plainTarget(_ path: String) -> (key: String, scope: ScopePath)? {
        guard path.hasPrefix("/v1/prefs/") else { return nil }
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
        return (keyText, scope)
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
