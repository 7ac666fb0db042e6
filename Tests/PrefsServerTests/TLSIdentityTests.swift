import Foundation
import PrefsKit
import TestHarness
import Testing

@testable import PrefsServer

/// `prefsd --tls-cert --tls-key`: the files read with clear refusals, and a TCP listener that
/// serves TLS may bind an address other machines reach. Needs openssl to make certificates.
@Suite(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl")))
struct TLSIdentityTests {
    /// A folder with a self-signed certificate and its key, and a second key that is not its.
    static func files() async throws -> (folder: URL, cert: String, key: String, otherKey: String) {
        let folder = URL(fileURLWithPath: "/tmp/prefsd-tls-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let (cert, key, otherKey) = (
            folder.appending(path: "cert.pem").path, folder.appending(path: "key.pem").path, folder.appending(path: "other.pem").path
        )
        for (certificate, privateKey) in [(cert, key), (folder.appending(path: "other-cert.pem").path, otherKey)] {
            let made = try await CommandResult.runTool(
                "/usr/bin/openssl",
                ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", privateKey, "-out", certificate, "-days", "1", "-subj", "/CN=localhost"])
            #expect(made.status == 0, "\(made.stderr)")
        }
        return (folder, cert, key, otherKey)
    }

    @Test func readsACertificateAndItsKey() async throws {
        let (folder, cert, key, _) = try await Self.files()
        defer { try? FileManager.default.removeItem(at: folder) }
        let identity = try TLSIdentity(certificateFile: cert, keyFile: key)
        #expect(identity.certificateFile == cert && identity.keyFile == key)
        // With TLS, an address other machines reach needs no --allow-non-loopback…
        let listener = try TCPListener(address: "0.0.0.0:7878", token: nil, tls: identity)
        #expect(listener.tls != nil && listener.host == "0.0.0.0")
        // …without it, it still does.
        #expect(throws: PrefsError.self) { try TCPListener(address: "0.0.0.0:7878", token: nil) }
    }

    @Test func refusesFilesItCannotUse() async throws {
        let (folder, cert, key, otherKey) = try await Self.files()
        defer { try? FileManager.default.removeItem(at: folder) }
        let cases: [(cert: String, key: String, says: String)] = [
            ("/nonexistent/cert.pem", key, "Cannot read the TLS certificate /nonexistent/cert.pem: there is no such file"),
            (cert, "/nonexistent/key.pem", "Cannot read the TLS key /nonexistent/key.pem: there is no such file"),
            (key, key, "Cannot read the TLS certificate \(key) as PEM"),
            (cert, cert, "Cannot read the TLS key \(cert) as a PEM private key"),
            (cert, otherKey, "does not go with the certificate"),
        ]
        for (certificate, privateKey, says) in cases {
            #expect {
                try TLSIdentity(certificateFile: certificate, keyFile: privateKey)
            } throws: { error in
                guard let error = error as? PrefsError else { return false }
                return error.code == .invalidRequest && error.message.contains(says)
            }
        }
    }
}
