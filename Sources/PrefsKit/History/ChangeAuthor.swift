import Foundation

/// Who made a change, as the change log records it.
///
/// - On prefsd's Unix socket: the user the daemon serves (the socket admits no other) and, in
///   ``agent``, the client's program from `SO_PEERCRED` (`prefsctl[4242]`) and its `User-Agent`.
/// - On its TCP listener: the bearer token's name, and the `User-Agent`.
/// - In a library store: its `StoreConfiguration`'s author, by default the process's user and
///   program.
/// - On PostgreSQL, also the ``host`` whose prefsd or store committed the change.
public struct ChangeAuthor: Sendable, Hashable {
    /// The user or token the change is attributed to (`alice`, `token:default`).
    public var name: String
    /// The program that sent it, and its `User-Agent` when it gave one
    /// (`prefsctl/0.1.0 (prefsctl[4242])`).
    public var agent: String?
    /// The host that committed it, on a database several hosts share.
    public var host: String?

    /// An author.
    ///
    /// - Parameters:
    ///   - name: The user or token the change is attributed to.
    ///   - agent: The program that sent it.
    ///   - host: The host that committed it.
    public init(name: String, agent: String? = nil, host: String? = nil) {
        self.name = name
        self.agent = agent
        self.host = host
    }

    /// This process: its user's login name and its program with its pid (`alice`,
    /// `MyApp[4242]`) — what a library store records unless its configuration names another.
    public static var currentProcess: ChangeAuthor {
        let process = ProcessInfo.processInfo
        return ChangeAuthor(name: userName(uid: getuid()), agent: "\(process.processName)[\(process.processIdentifier)]")
    }

    /// The login name of `uid`, or `uid:N` when the user database has none.
    package static func userName(uid: uid_t) -> String {
        // The entry's strings point into `buffer`, which must outlive reading them: an array
        // passed as `&buffer` is only guaranteed for the call's duration.
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 4096) { buffer in
            var entry = passwd()
            var result: UnsafeMutablePointer<passwd>?
            guard getpwuid_r(uid, &entry, buffer.baseAddress!, buffer.count, &result) == 0, result != nil,
                let name = entry.pw_name
            else { return "uid:\(uid)" }
            return String(cString: name)
        }
    }
}

/// Who makes a write, and why. A server builds one from each request (the peer's author, the
/// `Prefs-Reason` header); for an application, ``PrefsService``'s `withReason(_:_:)` and the
/// `reason:` parameters set ``current`` around its calls, which a store reads once as a call
/// enters it (and a client turns into the header). A store's configured author stands in for a
/// missing one.
package struct ChangeOrigin: Sendable, Hashable {
    /// Who, if the caller knows (a server does); else the store's configured author.
    package var author: ChangeAuthor?
    /// Why, if given.
    package var reason: String?

    /// An origin.
    package init(author: ChangeAuthor? = nil, reason: String? = nil) {
        self.author = author
        self.reason = reason
    }

    /// The origin of the current task's writes, as `withReason(_:_:)` sets it: read only where an
    /// application's call enters a store or a client.
    @TaskLocal package static var current: ChangeOrigin?

    /// The longest reason accepted, in bytes of UTF-8.
    package static let maximumReasonBytes = 500

    /// Throws `invalid_request` unless `reason` is 1 to ``maximumReasonBytes`` bytes without
    /// control characters.
    package static func checkReason(_ reason: String) throws {
        // ASCII (most reasons) is checked byte by byte; only other text asks Unicode's tables.
        let ascii = reason.utf8.allSatisfy { $0 < 0x80 }
        let hasControl =
            ascii
            ? reason.utf8.contains { $0 < 0x20 || $0 == 0x7F }
            : reason.unicodeScalars.contains { $0.properties.generalCategory == .control }
        guard !reason.isEmpty, reason.utf8.count <= maximumReasonBytes, !hasControl else {
            throw PrefsError(
                .invalidRequest,
                "A change's reason takes 1 to \(maximumReasonBytes) bytes of text on one line, not "
                    + "\(reason.isEmpty ? "nothing" : "'\(reason.prefix(60))…' (\(reason.utf8.count) bytes)").")
        }
    }
}
