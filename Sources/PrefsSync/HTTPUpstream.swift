import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import NIOSSL
import PrefsEngine
import PrefsKit

/// A replica's way to its upstream prefsd over HTTP or HTTPS: each exchange is one
/// `POST {url}/v1/sync` with the device's named token as `Authorization: Bearer TOKEN`.
///
/// One `HTTPClient` per upstream, its connections kept alive between exchanges; ``shutdown()``
/// ends it once the engine that syncs through it has closed. An `https://` upstream's
/// certificate is verified against the system's trust store, or against the CA file given.
///
/// Errors are ``PrefsError``s: what the upstream answered (`{"error": {"code", "message"}}`)
/// with its code; `unreachable`, naming the URL, when it cannot be reached, cut the connection,
/// or presented a certificate that did not verify.
package final class HTTPUpstream: SyncTransport {
    /// The upstream's URL, as given (without a trailing slash).
    package let url: String
    /// How long an exchange may take beyond the long poll it asks for.
    package static let margin = Duration.seconds(15)
    /// The largest answer read: a snapshot of a big store, or 1000 changes of large values.
    static let largestAnswer = 512 * 1024 * 1024

    private let endpoint: String
    private let authorization: String
    private let client: HTTPClient

    /// A transport to the upstream at `url` (`http://HOST:PORT` or `https://HOST:PORT`, with or
    /// without a path prefix), as the device whose named token's secret is `token`; an `https`
    /// upstream's certificate verified against the PEM certificates of `caFile` when given, else
    /// against the system's trust store.
    ///
    /// - Throws: ``PrefsError`` `invalid_request` for a URL that is not http(s) with a host, an
    ///   empty token, a CA file for an `http://` URL, or a CA file that cannot be read as PEM.
    package convenience init(url: String, token: String, caFile: String? = nil) throws {
        self.init(try Settings(url: url, token: token, caFile: caFile))
    }

    /// A transport with `settings`, which were checked as they were made: it cannot fail.
    package init(_ settings: Settings) {
        url = settings.url
        endpoint = settings.url + "/v1/sync"
        authorization = settings.authorization
        client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: settings.client)
    }

    /// An upstream's URL, the device's token and how to verify the upstream's certificate,
    /// checked: what a transport is made of, before it holds any connection.
    package struct Settings: Sendable {
        /// The upstream's URL, without a trailing slash.
        package let url: String
        /// The `Authorization` header's value.
        let authorization: String
        /// The HTTP client's configuration (TLS, timeouts, no redirects).
        let client: HTTPClient.Configuration

        /// Checks `url` (`http://HOST:PORT` or `https://HOST:PORT`, with or without a path
        /// prefix), `token` (the secret of the device's named token) and `caFile` (PEM
        /// certificates to verify an `https` upstream against, else the system's trust store).
        ///
        /// - Throws: ``PrefsError`` `invalid_request` for a URL that is not http(s) with a host,
        ///   an empty token, a CA file for an `http://` URL, or a CA file that cannot be read as
        ///   PEM.
        package init(url: String, token: String, caFile: String? = nil) throws {
            let trimmed = url.hasSuffix("/") ? String(url.dropLast()) : url
            guard let parsed = URL(string: trimmed), let scheme = parsed.scheme?.lowercased(), ["http", "https"].contains(scheme),
                parsed.host?.isEmpty == false, parsed.query == nil, parsed.fragment == nil
            else {
                throw PrefsError(
                    .invalidRequest, "The upstream '\(url)' is no URL prefsd can sync with: give http://HOST:PORT or https://HOST:PORT.")
            }
            let secret = token.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !secret.isEmpty else { throw PrefsError(.invalidRequest, "The upstream's token is empty.") }
            var tls: TLSConfiguration?
            if scheme == "https" {
                var configuration = TLSConfiguration.makeClientConfiguration()
                // Closing a connection waits this long for the upstream's close_notify: one whose
                // long poll is still waiting there answers it only then. A device that stops, or
                // drops a connection, need not wait NIOSSL's five seconds for that.
                configuration.shutdownTimeout = .milliseconds(250)
                if let caFile {
                    do {
                        _ = try NIOSSLCertificate.fromPEMFile(caFile)
                    } catch {
                        throw PrefsError(
                            .invalidRequest, "The upstream's CA file \(caFile) cannot be read as PEM certificates: \(error).")
                    }
                    configuration.trustRoots = .file(caFile)
                }
                tls = configuration
            } else if let caFile {
                throw PrefsError(
                    .invalidRequest, "A CA file (\(caFile)) verifies an https:// upstream's certificate; \(url) is plain http.")
            }
            var configuration = HTTPClient.Configuration(
                tlsConfiguration: tls, redirectConfiguration: .disallow,
                timeout: HTTPClient.Configuration.Timeout(connect: .seconds(10)))
            // The replica tries again after a pause of its own: a connection that fails fails the
            // exchange at once, with its reason (a refused connection, a certificate).
            configuration.connectionPool.retryConnectionEstablishment = false
            configuration.httpVersion = .http1Only
            self.url = trimmed
            authorization = "Bearer " + secret
            client = configuration
        }
    }

    /// Sends `request` and returns the upstream's answer.
    package func exchange(_ request: SyncRequest) async throws -> SyncAnswer {
        var http = HTTPClientRequest(url: endpoint)
        http.method = .POST
        http.headers.add(name: "Authorization", value: authorization)
        http.headers.add(name: "Content-Type", value: "application/json")
        http.headers.add(name: "Accept", value: "application/json")
        http.headers.add(name: "User-Agent", value: "prefsd/\(prefsVersion) (sync)")
        http.body = .bytes(ByteBuffer(data: try Self.encoder.encode(request)))
        let wait = Duration.milliseconds(max(0, request.wait ?? 0)) + Self.margin
        let (status, body): (HTTPResponseStatus, ByteBuffer)
        do {
            let response = try await client.execute(http, timeout: .milliseconds(Int64(wait / .milliseconds(1))))
            status = response.status
            body = try await response.body.collect(upTo: Self.largestAnswer)
        } catch let error as PrefsError {
            throw error
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw unreachable(error)
        }
        guard status == .ok else { throw answered(status, body) }
        do {
            return try WireJSON.decode(SyncAnswer.self, from: body.readableBytesView)
        } catch {
            throw PrefsError(.unavailable, "The upstream \(url) answered something that is not a sync answer: \(error).")
        }
    }

    /// Ends the client; the engine syncing through it has closed.
    package func shutdown() async {
        try? await client.shutdown()
    }


    private static let encoder = WireJSON.encoder()

    /// The upstream's error answer as the error it names.
    private func answered(_ status: HTTPResponseStatus, _ body: ByteBuffer) -> PrefsError {
        if let error = try? WireJSON.decoder().decode(ErrorBody.self, from: Data(body.readableBytesView)) {
            return error.prefsError(httpStatus: Int(status.code))
        }
        return PrefsError(
            PrefsError.Code(httpStatus: Int(status.code)),
            "The upstream \(url) answered \(status.code) \(status.reasonPhrase) without an error body: is it a prefsd?")
    }

    /// What BoringSSL said, without its file and line: `CERTIFICATE_VERIFY_FAILED`.
    private static func reason(_ error: BoringSSLError) -> String {
        let text = "\(error)"
        guard let start = text.range(of: "OPENSSL_internal:")?.upperBound else { return text }
        return String(text[start...].prefix { $0 != " " && $0 != "]" })
    }

    /// A failure to reach the upstream, as `unreachable` naming its URL.
    private func unreachable(_ error: any Error) -> PrefsError {
        switch error {
        case let error as NIOSSLError:
            if case .handshakeFailed(let reason) = error {
                return PrefsError(
                    .unreachable,
                    "Cannot reach the upstream \(url): its certificate did not verify (\(Self.reason(reason))); give the CA that signed it with --upstream-ca, or fix the upstream's certificate."
                )
            }
        case let error as NIOSSLExtraError:
            return PrefsError(
                .unreachable, "Cannot reach the upstream \(url): its certificate did not verify (\(error)).")
        case let error as HTTPClientError where error == .readTimeout || error == .deadlineExceeded:
            return PrefsError(.unreachable, "The upstream \(url) did not answer in time.")
        case let error as HTTPClientError where error == .remoteConnectionClosed:
            return PrefsError(.unreachable, "The upstream \(url) closed the connection before it answered.")
        case let error as IOError:
            return PrefsError(.unreachable, "Cannot reach the upstream \(url): \(String(cString: strerror(error.errnoCode))).")
        default:
            break
        }
        return PrefsError(.unreachable, "Cannot reach the upstream \(url): \(error).")
    }
}
