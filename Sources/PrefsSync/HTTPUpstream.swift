import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import NIOSSL
import PrefsEngine
import PrefsKit
import Synchronization

/// A replica's way to its upstream prefsd over HTTP or HTTPS, with the device's named token as
/// `Authorization: Bearer TOKEN` (its blobs' too: ``BlobTransport``): its exchanges go as frames of one sync stream
/// (`POST {url}/v1/sync:stream`, ``SyncStreamConnection``), opened when the first is sent and
/// again after one ends; to an upstream without streams (one that answers 404), or behind a
/// reverse proxy that holds a stream's head back until its body ends, each is one
/// `POST {url}/v1/sync` (for ten minutes, then a stream is tried again).
///
/// One `HTTPClient` per upstream; ``shutdown()`` ends it, and the stream, once the engine that
/// syncs through it has closed. An `https://` upstream's
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
    /// The `Authorization` header's value: the device's token.
    let authorization: String
    /// The client every request to the upstream goes through.
    let client: HTTPClient

    /// Where the sync stream stands.
    private enum Stream {
        /// None is open: the next exchange opens one.
        case closed
        /// One is being opened, for the exchanges that wait for it; nil: the upstream has none.
        case opening(Task<SyncStreamConnection?, any Error>)
        /// This one, until it ends.
        case open(SyncStreamConnection)
        /// The upstream serves no streams (it answered 404), or something between holds a
        /// stream's head back (a reverse proxy that buffers request bodies): each exchange is a
        /// request of its own until then, when a stream is tried again.
        case unsupported(until: ContinuousClock.Instant)
    }

    /// How long a device does without a stream once one could not be opened.
    static let withoutStreams = Duration.seconds(600)

    private let stream = Mutex(Stream.closed)

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

    /// Sends `request` and returns the upstream's answer: on the sync stream, or on a request
    /// of its own to an upstream without streams.
    package func exchange(_ request: SyncRequest) async throws -> SyncAnswer {
        let timeout = Duration.milliseconds(max(0, request.wait ?? 0)) + Self.margin
        guard let connection = try await streamConnection() else { return try await post(request, timeout: timeout) }
        return try await connection.exchange(request, timeout: timeout)
    }

    /// The open sync stream, opened if none is; nil for an upstream without streams.
    private func streamConnection() async throws -> SyncStreamConnection? {
        let opening: Task<SyncStreamConnection?, any Error>? = stream.withLock { stream in
            switch stream {
            case .open(let connection) where !connection.hasEnded: return nil
            case .opening(let task): return task
            case .unsupported(let until) where ContinuousClock.now < until: return nil
            case .closed, .open, .unsupported:
                let task = startOpening()
                stream = .opening(task)
                return task
            }
        }
        guard let opening else {
            return stream.withLock { stream in
                if case .open(let connection) = stream { connection } else { nil }
            }
        }
        do {
            let connection = try await opening.value
            stream.withLock { stream in
                guard case .opening = stream else { return }
                stream = connection.map { .open($0) } ?? .unsupported(until: .now + Self.withoutStreams)
            }
            return connection
        } catch is StreamHeld {
            stream.withLock { stream in
                if case .opening = stream { stream = .unsupported(until: .now + Self.withoutStreams) }
            }
            return nil
        } catch {
            stream.withLock { stream in
                if case .opening = stream { stream = .closed }
            }
            throw error
        }
    }

    /// A task opening a sync stream.
    private func startOpening() -> Task<SyncStreamConnection?, any Error> {
        Task { try await openStream() }
    }

    /// Opens a sync stream: nil if the upstream answers that it has none (404).
    private func openStream() async throws -> SyncStreamConnection? {
        var http = HTTPClientRequest(url: endpoint + ":stream")
        http.method = .POST
        http.headers.add(name: "Authorization", value: authorization)
        http.headers.add(name: "Content-Type", value: "application/x-ndjson")
        http.headers.add(name: "Content-Encoding", value: "deflate")
        http.headers.add(name: "Accept-Encoding", value: "deflate")
        http.headers.add(name: "User-Agent", value: "prefsd/\(prefsVersion) (sync)")
        let (frames, body) = AsyncStream.makeStream(of: ByteBuffer.self)
        http.body = .stream(frames, length: .unknown)
        let request = http
        let response: HTTPClientResponse
        do {
            // Its head comes at once; only the opening is timed (the stream lives on). One that
            // does not come is held by something between that waits for the body's end.
            response = try await withThrowingTaskGroup(of: HTTPClientResponse.self) { group in
                group.addTask { try await self.client.execute(request, deadline: .distantFuture) }
                group.addTask {
                    try await Task.sleep(for: Self.margin)
                    throw StreamHeld()
                }
                defer { group.cancelAll() }
                return try await group.next()!
            }
        } catch let error as StreamHeld {
            body.finish()
            throw error
        } catch {
            body.finish()
            throw mapped(error)
        }
        guard response.status == .ok else {
            body.finish()
            if response.status == .notFound { return nil }
            let answer = (try? await response.body.collect(upTo: 1024 * 1024)) ?? ByteBuffer()
            throw answered(response.status, answer)
        }
        let url = url
        return SyncStreamConnection(body: body, response: response, largestAnswer: Self.largestAnswer) { error in
            Self.unreachable(error, url: url)
        }
    }

    /// A stream's head did not come in time.
    private struct StreamHeld: Error {}

    /// Sends `request` as a request of its own (`POST /v1/sync`), waiting up to `timeout`.
    private func post(_ request: SyncRequest, timeout: Duration) async throws -> SyncAnswer {
        var http = HTTPClientRequest(url: endpoint)
        http.method = .POST
        http.headers.add(name: "Authorization", value: authorization)
        http.headers.add(name: "Content-Type", value: "application/json")
        http.headers.add(name: "Accept", value: "application/json")
        http.headers.add(name: "User-Agent", value: "prefsd/\(prefsVersion) (sync)")
        http.body = .bytes(ByteBuffer(data: try Self.encoder.encode(request)))
        let (status, body): (HTTPResponseStatus, ByteBuffer)
        do {
            let response = try await client.execute(http, timeout: .milliseconds(Int64(timeout / .milliseconds(1))))
            status = response.status
            body = try await response.body.collect(upTo: Self.largestAnswer)
        } catch {
            throw mapped(error)
        }
        guard status == .ok else { throw answered(status, body) }
        do {
            return try WireJSON.decode(SyncAnswer.self, from: body.readableBytesView)
        } catch {
            throw PrefsError(.unavailable, "The upstream \(url) answered something that is not a sync answer: \(error).")
        }
    }

    /// Ends the stream and the client; the engine syncing through it has closed.
    package func shutdown() async {
        let open = stream.withLock { stream in
            defer { stream = .closed }
            return stream
        }
        switch open {
        case .open(let connection): connection.end(PrefsError(.unavailable, "The replica has stopped syncing."))
        case .opening(let task): task.cancel()
        case .closed, .unsupported: break
        }
        try? await client.shutdown()
    }

    /// An error of an exchange's request as the replica takes it: a ``PrefsError`` and a
    /// cancellation as they are, any other as `unreachable`.
    func mapped(_ error: any Error) -> any Error {
        switch error {
        case let error as PrefsError: error
        case is CancellationError: error
        default: Self.unreachable(error, url: url)
        }
    }


    private static let encoder = WireJSON.encoder()

    /// The upstream's error answer as the error it names.
    func answered(_ status: HTTPResponseStatus, _ body: ByteBuffer) -> PrefsError {
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

    /// A failure to reach the upstream at `url`, as `unreachable` naming it.
    private static func unreachable(_ error: any Error, url: String) -> PrefsError {
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
