import Hummingbird
import PrefsKit

/// Lets a request through only when it carries `Authorization: Bearer TOKEN`; any other gets
/// 401 `unauthorized` with no detail. The comparison takes the same time however much of the
/// token a guess gets right. Guards the loopback TCP listener (`prefsd --listen`); the Unix
/// socket checks its peer's uid instead.
struct BearerTokenMiddleware<Context: RequestContext>: RouterMiddleware {
    let token: [UInt8]

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        let presented = request.headers[.authorization].map { Array($0.utf8) } ?? []
        guard Self.matches(presented, prefix: Array("Bearer ".utf8), token: token) else {
            throw PrefsError(.unauthorized, "Unauthorized.")
        }
        return try await next(request, context)
    }

    /// Whether `presented` is `prefix` + `token`, in time that depends only on their lengths.
    static func matches(_ presented: [UInt8], prefix: [UInt8], token: [UInt8]) -> Bool {
        let expected = prefix + token
        var difference = UInt8(presented.count == expected.count ? 0 : 1)
        for index in expected.indices {
            difference |= expected[index] ^ (index < presented.count ? presented[index] : 0)
        }
        return difference == 0 && !token.isEmpty
    }
}
