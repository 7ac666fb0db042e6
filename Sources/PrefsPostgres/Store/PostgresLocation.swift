import Foundation
import PrefsKit

/// Where a PostgreSQL database is and how to reach it, from a URL such as
/// `postgresql://prefs@db.internal:5432/prefs?sslmode=require`.
///
/// The password comes from the URL (`postgresql://user:secret@host/db`), else from
/// `PGPASSWORD`, else from a password file that only its owner can read. It is never part of
/// ``description``, which logs and ``ServiceStatus/database`` show.
public struct PostgresLocation: Sendable, CustomStringConvertible {
    /// Whether, and how insistently, the connection uses TLS (libpq's `sslmode`).
    public enum TLSMode: String, Sendable, CaseIterable {
        /// Never.
        case disable
        /// When the server offers it (libpq's default).
        case prefer
        /// Always; refuse a server without TLS.
        case require
    }

    /// The server's host name or address.
    public var host: String
    /// The server's port (5432 unless the URL names one).
    public var port: Int
    /// The role prefsd connects as.
    public var username: String
    /// The role's password, if one was found (never shown: see ``description``).
    public var password: String?
    /// The database's name.
    public var database: String
    /// Whether the connection uses TLS (`sslmode`).
    public var tls: TLSMode

    /// Parses `postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=MODE]` (or
    /// `postgres://…`). Without a password in the URL, `environment`'s `PGPASSWORD` or the file
    /// at `passwordFile` (which must be the user's own and closed to others: `chmod 600`) gives it.
    ///
    /// - Parameters:
    ///   - text: The URL.
    ///   - environment: Where to look for `PGPASSWORD` (the process's environment by default).
    ///   - passwordFile: A file whose first line is the password, or nil.
    /// - Throws: ``PrefsError`` — `invalid_request` with what is wrong, naming the URL without its
    ///   password, or for a password file that cannot be read; `forbidden` for a password file
    ///   that is not the user's own or is open to others.
    public init(url text: String, environment: [String: String] = ProcessInfo.processInfo.environment, passwordFile: String? = nil)
        throws
    {
        guard let components = URLComponents(string: text), let scheme = components.scheme,
            ["postgresql", "postgres"].contains(scheme.lowercased())
        else {
            throw PrefsError(
                .invalidRequest,
                "'\(Self.redacted(text))' is not a PostgreSQL URL; give one like postgresql://USER@HOST:PORT/DATABASE.")
        }
        guard let user = components.user, !user.isEmpty else {
            throw PrefsError(.invalidRequest, "The PostgreSQL URL \(Self.redacted(text)) names no user: postgresql://USER@HOST/DATABASE.")
        }
        guard let host = components.host, !host.isEmpty else {
            throw PrefsError(.invalidRequest, "The PostgreSQL URL \(Self.redacted(text)) names no host: postgresql://USER@HOST/DATABASE.")
        }
        let database = String(components.path.drop { $0 == "/" })
        guard !database.isEmpty, !database.contains("/") else {
            throw PrefsError(.invalidRequest, "The PostgreSQL URL \(Self.redacted(text)) names no database: postgresql://USER@HOST/DATABASE.")
        }
        var tls = TLSMode.prefer
        for item in components.queryItems ?? [] {
            switch item.name {
            case "sslmode":
                guard let mode = item.value.flatMap(TLSMode.init(rawValue:)) else {
                    let modes = TLSMode.allCases.map(\.rawValue).joined(separator: ", ")
                    throw PrefsError(.invalidRequest, "sslmode=\(item.value ?? "") is not supported; use one of \(modes).")
                }
                tls = mode
            default:
                throw PrefsError(
                    .invalidRequest, "The PostgreSQL URL has an unknown parameter '\(item.name)'; only sslmode is understood.")
            }
        }
        self.host = host
        self.port = components.port ?? 5432
        self.username = user.removingPercentEncoding ?? user
        self.database = database.removingPercentEncoding ?? database
        self.tls = tls
        if let password = components.password {
            self.password = password.removingPercentEncoding ?? password
        } else if let password = environment["PGPASSWORD"] {
            self.password = password
        } else if let passwordFile {
            self.password = try Self.readPasswordFile(passwordFile)
        } else {
            self.password = nil
        }
    }

    /// `postgresql://USER@HOST:PORT/DATABASE`, without the password.
    public var description: String {
        "postgresql://\(username)@\(host.contains(":") ? "[\(host)]" : host):\(port)/\(database)"
    }

    /// `text` with any password in it replaced by `***`, for messages about a URL that did not parse.
    static func redacted(_ text: String) -> String {
        guard let components = URLComponents(string: text), components.password != nil else { return text }
        var shown = components
        shown.password = "***"
        return shown.string ?? "the URL"
    }

    /// The first line of a password file that is the user's own and readable by them only.
    private static func readPasswordFile(_ path: String) throws -> String {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw PrefsError(.invalidRequest, "Cannot read the password file \(path): \(String(cString: strerror(errno))).")
        }
        guard info.st_uid == getuid(), info.st_mode & 0o077 == 0 else {
            throw PrefsError(.forbidden, "The password file \(path) must be yours and readable by you only: chmod 600 \(path).")
        }
        let text = try String(contentsOfFile: path, encoding: .utf8)
        return String(text.prefix { $0 != "\n" && $0 != "\r" })
    }
}
