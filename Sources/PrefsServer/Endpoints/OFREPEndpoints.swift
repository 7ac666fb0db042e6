import Crypto
import Foundation
import HTTPTypes
import NIOCore
import PrefsEngine
import PrefsKit

/// The OpenFeature Remote Evaluation Protocol (OFREP, `open-feature/protocol`'s
/// `service/openapi.yaml`, version 0.1.0): every OpenFeature SDK's OFREP provider reads prefsd's
/// preferences as flags, with no prefsd-specific code.
///
/// A request's evaluation context becomes a scope (``ScopeTemplate``), where each flag is the
/// key's effective value, explained in OpenFeature's words (``FlagEvaluation``). Errors are the
/// protocol's own shapes — `{key, errorCode, errorDetails}` — for what the protocol names (a
/// body that is not JSON: `PARSE_ERROR`; a context that names no scope: `INVALID_CONTEXT`; a key
/// with no value and no default: 404 `FLAG_NOT_FOUND`); the rest (401, 403, 413) are prefsd's.
/// A caller needs a reader at the scope its context reads.
enum OFREPEndpoints {
    static func all(engine: any EngineServing, settings: OFREPSettings, limits: ServerLimits) -> [Endpoint] {
        [
            // Cacheable: an answer depends on the target and the context alone, until the next change.
            Endpoint(.post, "/ofrep/v1/evaluate/flags/{key}", body: .whole(limit: limits.maximumRequestBytes), cacheable: true) {
                request in
                let key = request.parameters["key"] ?? ""
                let scope: ScopePath
                switch try evaluationScope(of: request, settings: settings) {
                case .success(let found): scope = found
                case .failure(let failure): return .now(failure.answer(key: key))
                }
                guard (try? KeyName(key)) != nil, let flag = engine.evaluateFlag(key, at: scope) else {
                    let details = "No flag \(key.prefix(200)) has a value at \(scope.path) or a default."
                    return .now(.json(ByteBuffer(string: failureJSON(key: key, code: "FLAG_NOT_FOUND", details: details)), status: .notFound))
                }
                return .now(.json(ByteBuffer(string: flag.json)))
            },
            Endpoint(.post, "/ofrep/v1/evaluate/flags", body: .whole(limit: limits.maximumRequestBytes)) { request in
                let scope: ScopePath
                switch try evaluationScope(of: request, settings: settings) {
                case .success(let found): scope = found
                case .failure(let failure): return .now(failure.answer(key: nil))
                }
                let flags = engine.evaluateFlags(prefix: settings.prefix, at: scope)
                return .now(tagged(#"{"flags":["# + flags.map(\.json).joined(separator: ",") + "]}", for: request))
            },
            Endpoint(.get, "/ofrep/v1/configuration") { request in
                let configuration = """
                    {"capabilities":{"cacheInvalidation":{"polling":{"enabled":true,"minPollingIntervalMs":\(settings.minimumPollingMilliseconds)}},\
                    "flagEvaluation":{"supportedTypes":["boolean","string","int","float","object"]}},"name":"prefsd"}
                    """
                return .now(tagged(configuration, for: request))
            },
        ]
    }

    /// Why a request's context names no scope, as OFREP says it.
    struct Failure: Error {
        var code: String
        var details: String

        /// The 400 answer: with the flag's `key` for a single evaluation.
        func answer(key: String?) -> Answer {
            .json(ByteBuffer(string: failureJSON(key: key, code: code, details: details)), status: .badRequest)
        }
    }

    /// The scope `request`'s context reads at, or why it names none; `forbidden` (thrown) when
    /// the caller may not read there.
    static func evaluationScope(of request: EndpointRequest, settings: OFREPSettings) throws -> Result<ScopePath, Failure> {
        let context: [String: JSONValue]
        switch try? JSONValue(parsing: (request.body ?? ByteBuffer()).readableBytesView) {
        case .object(let members)?:
            switch members["context"] {
            case nil, .null?: context = [:]
            case .object(let attributes)?: context = attributes
            default: return .failure(Failure(code: "PARSE_ERROR", details: "The request's context must be an object."))
            }
        case nil where (request.body?.readableBytes ?? 0) == 0:
            context = [:]
        default:
            return .failure(Failure(code: "PARSE_ERROR", details: "The request body must be a JSON object such as {\"context\": {...}}."))
        }
        let scope: ScopePath
        do {
            scope = try settings.scopeTemplate.scope(for: context)
        } catch let error as PrefsError {
            return .failure(Failure(code: "INVALID_CONTEXT", details: error.message))
        }
        try request.checkAccess(.reader, at: scope)
        return .success(scope)
    }

    /// `{key?, errorCode, errorDetails}`.
    static func failureJSON(key: String?, code: String, details: String) -> String {
        var members: [String: JSONValue] = ["errorCode": .string(code), "errorDetails": .string(details)]
        if let key { members["key"] = .string(key) }
        return JSONValue.object(members).canonicalText
    }

    /// `json` as a 200 with an `ETag` of its bytes — or, when the request's `If-None-Match`
    /// names that tag already, a 304 with it: the tag changes exactly when the answer does.
    static func tagged(_ json: String, for request: EndpointRequest) -> Answer {
        let tag = "\"" + SHA256.hash(data: Array(json.utf8)).prefix(16).lowercaseHex + "\""
        let field = HTTPField(name: .eTag, value: tag)
        if let wanted = request.headers[.ifNoneMatch], wanted.split(separator: ",").contains(where: { candidate in
            let candidate = candidate.trimmingCharacters(in: .whitespaces)
            return candidate == "*" || candidate == tag || candidate == "W/" + tag
        }) {
            return Answer(status: .notModified, fields: [field], body: .whole(ByteBuffer()))
        }
        var answer = Answer.json(ByteBuffer(string: json))
        answer.fields.append(field)
        return answer
    }
}
