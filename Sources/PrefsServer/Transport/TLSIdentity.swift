import Foundation
import NIOSSL
import PrefsKit

/// The certificate and key `prefsd --tls-cert FILE --tls-key FILE` serves the TCP listener with:
/// every connection there then starts with a TLS handshake (NIOSSL's server handler, first in
/// its pipeline), and the bearer tokens travel encrypted.
package struct TLSIdentity: Sendable {
    /// The certificate file (PEM, the server's certificate then its chain).
    package let certificateFile: String
    /// The private key file (PEM).
    package let keyFile: String
    /// The server side of TLS, made once for every connection.
    let context: NIOSSLContext

    /// Reads the certificate chain and the key.
    ///
    /// - Throws: ``PrefsError`` `invalid_request` naming the file that cannot be read, or whose
    ///   contents are not what it should hold, or a key that is not the certificate's.
    package init(certificateFile: String, keyFile: String) throws {
        for (file, what) in [(certificateFile, "certificate"), (keyFile, "key")] {
            guard FileManager.default.isReadableFile(atPath: file) else {
                let reason = FileManager.default.fileExists(atPath: file) ? "it is not readable" : "there is no such file"
                throw PrefsError(.invalidRequest, "Cannot read the TLS \(what) \(file): \(reason).")
            }
        }
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(certificateFile)
        } catch {
            throw PrefsError(.invalidRequest, "Cannot read the TLS certificate \(certificateFile) as PEM: \(error).")
        }
        guard !chain.isEmpty else {
            throw PrefsError(.invalidRequest, "The TLS certificate file \(certificateFile) holds no certificate.")
        }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(file: keyFile, format: .pem)
        } catch {
            throw PrefsError(.invalidRequest, "Cannot read the TLS key \(keyFile) as a PEM private key: \(error).")
        }
        let configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        do {
            context = try NIOSSLContext(configuration: configuration)
        } catch {
            throw PrefsError(
                .invalidRequest, "The TLS key \(keyFile) does not go with the certificate \(certificateFile): \(error).")
        }
        self.certificateFile = certificateFile
        self.keyFile = keyFile
    }

    /// The handler that makes a new connection TLS: first in its pipeline.
    func handler() -> NIOSSLServerHandler {
        NIOSSLServerHandler(context: context)
    }
}
