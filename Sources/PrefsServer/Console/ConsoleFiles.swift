import Crypto
import Foundation
import HTTPTypes
import NIOCore
import PrefsKit

/// The console's files as `/ui/` serves them: compiled into the binary from `Console/` (the
/// EmbedConsole build plugin), each with its media type and an entity tag, behind headers that let
/// a browser run nothing but them.
package struct ConsoleFiles: Sendable {
    /// One file, ready to send.
    struct File: Sendable {
        let body: ByteBuffer
        let type: String
        /// A strong entity tag of the file's bytes: a browser revalidates with `If-None-Match`.
        let entityTag: String
    }

    /// The files compiled into this binary.
    package static let compiled = ConsoleFiles(EmbeddedConsole.files)

    /// The files by name (`index.html`, `app.js`).
    let files: [String: File]

    /// Every header an answer under `/ui/` carries. The Content-Security-Policy lets the page run
    /// only the console's own scripts and styles, talk only to prefsd, and be framed by no one;
    /// the page's secret is in a header, never a cookie, so nothing another site makes the browser
    /// send can act for it.
    static let securityFields: [HTTPField] = [
        HTTPField(
            name: HTTPField.Name("Content-Security-Policy")!,
            value:
                "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
        ),
        HTTPField(name: HTTPField.Name("X-Content-Type-Options")!, value: "nosniff"),
        HTTPField(name: HTTPField.Name("X-Frame-Options")!, value: "DENY"),
        HTTPField(name: HTTPField.Name("Referrer-Policy")!, value: "no-referrer"),
        HTTPField(name: HTTPField.Name("Cross-Origin-Opener-Policy")!, value: "same-origin"),
        HTTPField(name: HTTPField.Name("Cross-Origin-Resource-Policy")!, value: "same-origin"),
        HTTPField(name: .cacheControl, value: "no-cache"),
    ]

    /// The files of `embedded`: (name, text) pairs.
    init(_ embedded: [(name: String, text: String)]) {
        var files: [String: File] = [:]
        for (name, text) in embedded {
            let digest = SHA256.hash(data: Array(text.utf8)).prefix(12).lowercaseHex
            files[name] = File(body: ByteBuffer(string: text), type: Self.mediaType(of: name), entityTag: "\"\(digest)\"")
        }
        self.files = files
    }

    /// The console's files in `folder` — `Console/` of the source tree, as the EmbedConsole plugin
    /// compiles it — read once: for working on the console without rebuilding prefsd.
    package init(folder: String) throws {
        let url = URL(fileURLWithPath: folder)
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: folder)
        } catch {
            throw PrefsError(.invalidRequest, "Cannot read the console's folder \(folder): \(error.localizedDescription)")
        }
        self.init(
            try names.filter { Self.servedExtensions.contains(URL(fileURLWithPath: $0).pathExtension) }.sorted().map { name in
                (name, try String(contentsOf: url.appending(path: name), encoding: .utf8))
            })
        guard files["index.html"] != nil else { throw PrefsError(.invalidRequest, "The console's folder \(folder) has no index.html.") }
    }

    /// The extensions of the files the console is made of (the EmbedConsole plugin compiles the same).
    static let servedExtensions: Set<String> = ["html", "js", "css", "svg"]

    /// The answer to a `GET` of the file `name`: the file, or `304 Not Modified` when
    /// `ifNoneMatch` names its tag; `not_found` for a file the console does not have.
    func answer(_ name: String, ifNoneMatch: String?) throws -> Answer {
        guard let file = files[name] else {
            throw PrefsError(.notFound, "The console has no file '\(name.prefix(80))'; it starts at /ui/.")
        }
        let tag = HTTPField(name: .eTag, value: file.entityTag)
        let presented = ifNoneMatch?.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } ?? []
        if presented.contains(file.entityTag) || presented.contains("*") {
            return Answer(status: .notModified, fields: [tag] + Self.securityFields, body: .whole(ByteBuffer()))
        }
        var answer = Answer.whole(file.body, type: file.type)
        answer.fields += [tag] + Self.securityFields
        return answer
    }

    /// The media type of a file by its extension.
    private static func mediaType(of name: String) -> String {
        switch name.split(separator: ".").last {
        case "html": "text/html; charset=utf-8"
        case "js": "text/javascript; charset=utf-8"
        case "css": "text/css; charset=utf-8"
        case "svg": "image/svg+xml"
        default: "application/octet-stream"
        }
    }
}
