import Foundation
import PrefsKit
import Testing

@Suite("Errors")
struct PrefsErrorTests {
    @Test("HTTP statuses of openapi.yaml")
    func httpStatus() {
        let expected: [PrefsError.Code: Int] = [
            .invalidRequest: 400, .invalidJSON: 400, .invalidKey: 400, .invalidScope: 400, .invalidValue: 400,
            .invalidSchema: 400, .unknownKey: 400, .notFound: 404, .locked: 409, .conflict: 409, .compacted: 410,
            .staleRevision: 412, .tooLarge: 413, .shuttingDown: 503, .unavailable: 503, .unreachable: 503,
        ]
        for (code, status) in expected { #expect(code.httpStatus == status, "\(code)") }
        // Bad input is never a 500.
        #expect(PrefsError.Code.allCases.filter { $0.httpStatus == 500 } == [.internal])
    }

    @Test("prefsctl exit codes: 3 not found, 4 conflict, 69 unreachable or shutting down, else 1")
    func exitCodes() {
        #expect(PrefsError.Code.notFound.exitCode == 3)
        #expect(PrefsError.Code.locked.exitCode == 4)
        #expect(PrefsError.Code.conflict.exitCode == 4)
        #expect(PrefsError.Code.staleRevision.exitCode == 4)
        #expect(PrefsError.Code.unreachable.exitCode == 69)
        #expect(PrefsError.Code.shuttingDown.exitCode == 69)
        #expect(PrefsError.Code.unavailable.exitCode == 1)
        #expect(PrefsError.Code.invalidValue.exitCode == 1)
    }

    @Test("A bare status maps back to a code")
    func fromStatus() {
        #expect(PrefsError.Code(httpStatus: 404) == .notFound)
        #expect(PrefsError.Code(httpStatus: 409) == .conflict)
        #expect(PrefsError.Code(httpStatus: 410) == .compacted)
        #expect(PrefsError.Code(httpStatus: 418) == .invalidRequest)
        #expect(PrefsError.Code(httpStatus: 502) == .internal)
    }

    @Test("The error body carries code, message and oldestRevision, and decodes back")
    func body() throws {
        let error = PrefsError(.compacted, "Gone.", oldestRevision: 17)
        let data = try JSONEncoder().encode(ErrorBody(error))
        #expect(try JSONValue(parsing: data) == ["error": ["code": "compacted", "message": "Gone.", "oldestRevision": 17]])
        let back = try JSONDecoder().decode(ErrorBody.self, from: data).prefsError(httpStatus: 410)
        #expect(back == error)
        // A code this build does not know falls back on the status.
        let unknown = try JSONDecoder().decode(
            ErrorBody.self, from: Data(#"{"error": {"code": "brand_new", "message": "m"}}"#.utf8))
        #expect(unknown.prefsError(httpStatus: 409).code == .conflict)
        #expect(error.description == "Gone.")
    }

    @Test("A locked error's body carries the lock, and decodes back")
    func lockedBody() throws {
        let error = PrefsError(.locked, "Locked.", lock: PreferenceLock(key: "a.b", scope: "/accounts"))
        let data = try JSONEncoder().encode(ErrorBody(error))
        #expect(
            try JSONValue(parsing: data)
                == ["error": ["code": "locked", "message": "Locked.", "lock": ["key": "a.b", "scope": "/accounts"]]])
        #expect(try JSONDecoder().decode(ErrorBody.self, from: data).prefsError(httpStatus: 409) == error)
    }
}
