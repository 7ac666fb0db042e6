#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation
import PrefsKit
import PrefsSocket

/// The folder of the daemon's Unix socket, made ready before it listens.
enum SocketFolder {
    /// Creates the socket's folder (0700), checks a private one is this user's, and clears a
    /// stale socket file.
    static func prepare(_ path: String, privateFolder: Bool) throws {
        let folder = (path as NSString).deletingLastPathComponent
        if folder.isEmpty {
            // A bare file name: the socket goes in the working folder, which exists.
        } else if !FileManager.default.fileExists(atPath: folder) {
            try FileManager.default.createDirectory(
                atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } else if privateFolder {
            let attributes: [FileAttributeKey: Any]
            do {
                attributes = try FileManager.default.attributesOfItem(atPath: folder)
            } catch {
                throw PrefsError(.unavailable, "Cannot inspect the socket folder \(folder): \(error.localizedDescription)")
            }
            let owner = (attributes[.ownerAccountID] as? NSNumber)?.uint32Value
            guard owner == getuid() else {
                throw PrefsError(
                    .forbidden,
                    "The socket folder \(folder) belongs to uid \(owner.map(String.init) ?? "?"), not to you (uid \(getuid())); another user may be waiting on it. Remove it, or give prefsd another --socket."
                )
            }
            if let permissions = (attributes[.posixPermissions] as? NSNumber)?.intValue, permissions & 0o077 != 0 {
                chmod(folder, 0o700)
            }
        }
        guard FileManager.default.fileExists(atPath: path) else { return }
        if UnixSocket.isAnswering(path) {
            throw PrefsError(
                .conflict,
                "Another prefsd is already listening on \(path). Stop it, or give this one another --socket.")
        }
        // Nothing answers: a socket file left by a daemon that crashed.
        unlink(path)
    }
}
