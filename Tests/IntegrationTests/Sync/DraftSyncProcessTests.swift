import Foundation
import PrefsClient
import PrefsKit
import TestHarness
import Testing

/// Drafts between devices, all real daemons driven with prefsctl (``SyncTests``' upstream and
/// devices): a draft edited on two devices while their upstream was away — different paragraphs
/// merged, the same sentence kept as a conflicted copy that `drafts list` marks — and an edit
/// against a delete, which brings the draft back.
@Suite("Drafts between devices", .timeLimit(.minutes(5)))
struct DraftSyncProcessTests {
    static let first = "Morning walk by the river, the light low and gold over the water."
    static let second = "Lunch at the market with friends, bread and cheese in the sun."

    /// `prefsctl --json drafts show ID` on `daemon`, decoded.
    static func show(_ id: String, on daemon: Daemon, sourceLocation: SourceLocation = #_sourceLocation) async throws -> Draft {
        let shown = try await daemon.prefsctl("--json", "drafts", "show", id)
        #expect(shown.status == 0, "\(shown.stderr)", sourceLocation: sourceLocation)
        return try WireJSON.decode(Draft.self, from: Data(shown.stdout.utf8))
    }

    /// Alice's drafts on `daemon`, decoded.
    static func list(on daemon: Daemon) async throws -> [Draft] {
        struct Listing: Decodable { var drafts: [Draft] }
        let listed = try await daemon.prefsctl("--json", "drafts", "list", "--account", "alice")
        #expect(listed.status == 0, "\(listed.stderr)")
        return try WireJSON.decode(Listing.self, from: Data(listed.stdout.utf8)).drafts
    }

    @Test func draftsEditedOnTwoDevicesWhileApartAreMergedOrKeptAsACopy() async throws {
        try await Self.draftsMergeOrCopy(upstream: try await SyncTests.upstream())
    }

    @Test(
        "an upstream on PostgreSQL merges drafts and keeps copies the same way",
        .enabled(if: PostgresTestDatabase.isEnabled))
    func draftsMergeOnAPostgresUpstream() async throws {
        try await withPostgresDatabase { database in
            try await Self.draftsMergeOrCopy(upstream: try await TCPListenerTests.daemon(token: "upstream-t0ken", postgresURL: database.url))
        }
    }

    /// Two devices of `upstream`, each behind a proxy: a draft edited on both while they are cut
    /// off — different paragraphs and fields merged; then the same words, one text kept and the
    /// other a conflicted copy in the same thread, which `drafts list` marks.
    static func draftsMergeOrCopy(upstream: (daemon: Daemon, port: UInt16)) async throws {
        let proxies = [try FaultProxy(to: upstream.port), try FaultProxy(to: upstream.port)]
        defer { for proxy in proxies { proxy.close() } }
        var devices: [Daemon] = []
        for (proxy, name) in zip(proxies, ["laptop", "phone"]) {
            let secret = try await SyncTests.deviceToken(name, on: upstream.daemon)
            devices.append(try await SyncTests.device(of: "http://127.0.0.1:\(proxy.port)", secret: secret))
        }
        let (laptop, phone) = (devices[0], devices[1])
        let text = Self.first + "\n\n" + Self.second
        let created = try await laptop.prefsctl("drafts", "create", "--account", "alice", "--thread", "trip", "--text", text)
        #expect(created.status == 0, "\(created.stderr)")
        let id = created.output
        try await SyncTests.syncWait(laptop)
        try await SyncTests.syncWait(phone)
        #expect(try await Self.show(id, on: phone).text == text)

        // Apart: each device edits its own paragraph, and a field.
        for proxy in proxies { proxy.partition() }
        let early = text.replacingOccurrences(of: "Morning", with: "Early morning")
        #expect(try await laptop.prefsctl("drafts", "edit", id, "--text", early, "--cw", "food").status == 0)
        let friends = text.replacingOccurrences(of: "friends", with: "old friends")
        #expect(try await phone.prefsctl("drafts", "edit", id, "--text", friends, "--language", "en").status == 0)
        for proxy in proxies { proxy.heal() }
        for device in [laptop, phone, laptop] { try await SyncTests.syncWait(device) }
        for daemon in [upstream.daemon, laptop, phone] {
            let merged = try await Self.show(id, on: daemon)
            #expect(merged.text.contains("Early morning") && merged.text.contains("old friends"), "\(merged.text)")
            #expect(merged.contentWarning == "food" && merged.language == "en", "\(merged)")
        }

        // Apart again: both change the same words. One text stays; the other is a copy.
        for proxy in proxies { proxy.partition() }
        let merged = try await Self.show(id, on: laptop).text
        let silver = merged.replacingOccurrences(of: "low and gold", with: "pale and silver")
        #expect(try await laptop.prefsctl("drafts", "edit", id, "--text", silver).status == 0)
        let fire = merged.replacingOccurrences(of: "low and gold", with: "red as fire")
        #expect(try await phone.prefsctl("drafts", "edit", id, "--text", fire).status == 0)
        for proxy in proxies { proxy.heal() }
        for device in [laptop, phone, laptop] { try await SyncTests.syncWait(device) }
        for daemon in [upstream.daemon, laptop, phone] {
            let drafts = try await Self.list(on: daemon)
            #expect(drafts.count == 2, "\(drafts)")
            let texts = drafts.map(\.text)
            #expect(texts.contains { $0.contains("pale and silver") } && texts.contains { $0.contains("red as fire") }, "\(texts)")
            let copy = try #require(drafts.first { $0.conflictOf != nil })
            #expect(copy.conflictOf?.uuidString == id.uppercased(), "\(copy)")
            #expect(copy.thread == "trip")
        }
        let table = try await phone.prefsctl("drafts", "list", "--account", "alice")
        #expect(table.stdout.contains("(conflicted copy of "), "\(table.stdout)")
        let conflicts = try await upstream.daemon.prefsctl("conflicts")
        for rule in ["draft-merge", "conflicted-copy"] {
            #expect(conflicts.stdout.contains(rule), "prefsctl conflicts shows \(rule): \(conflicts.stdout)")
        }

        await laptop.expectCleanStop()
        await phone.expectCleanStop()
        await upstream.daemon.expectCleanStop()
    }

    @Test func anEditOnOneDeviceBeatsADeleteOnTheOther() async throws {
        let (upstream, port) = try await SyncTests.upstream()
        let url = "http://127.0.0.1:\(port)"
        let laptop = try await SyncTests.device(of: url, secret: try await SyncTests.deviceToken("laptop", on: upstream))
        // The phone reaches the upstream through a proxy that can cut it off.
        let proxy = try FaultProxy(to: port)
        let phone = try await SyncTests.device(
            of: "http://127.0.0.1:\(proxy.port)", secret: try await SyncTests.deviceToken("phone", on: upstream))
        let id = try await laptop.prefsctl("drafts", "create", "--account", "alice", "--text", "Keep me").output
        try await SyncTests.syncWait(laptop)
        try await SyncTests.syncWait(phone)

        // The phone is cut off and edits; the laptop deletes, and its delete reaches the upstream.
        proxy.partition()
        #expect(try await phone.prefsctl("drafts", "edit", id, "--text", "Keep me, edited").status == 0)
        #expect(try await laptop.prefsctl("drafts", "delete", id).status == 0)
        try await SyncTests.syncWait(laptop)
        #expect(try await upstream.prefsctl("drafts", "show", id).status == 3, "deleted on the upstream")
        proxy.heal()
        for device in [phone, laptop] { try await SyncTests.syncWait(device) }
        for daemon in [upstream, laptop, phone] {
            let back = try await Self.show(id, on: daemon)
            #expect(back.text == "Keep me, edited" && back.deletedElsewhere == true, "\(back)")
        }
        let table = try await laptop.prefsctl("drafts", "list", "--account", "alice")
        #expect(table.stdout.contains("(deleted elsewhere)"), "\(table.stdout)")
        let conflicts = try await upstream.prefsctl("conflicts")
        #expect(conflicts.stdout.contains("edit-beats-delete"), "\(conflicts.stdout)")

        await laptop.expectCleanStop()
        await phone.expectCleanStop()
        await upstream.expectCleanStop()
        proxy.close()
    }

    @Test func anAttachmentCutMidUploadIsResumedAndFetchedOnTheOtherDevice() async throws {
        let (upstream, port) = try await SyncTests.upstream()
        let url = "http://127.0.0.1:\(port)"
        // The laptop reaches the upstream through a proxy that cuts its upload midway.
        let proxy = try FaultProxy(to: port)
        defer { proxy.close() }
        let laptop = try await SyncTests.device(
            of: "http://127.0.0.1:\(proxy.port)", secret: try await SyncTests.deviceToken("laptop", on: upstream))
        let phone = try await SyncTests.device(of: url, secret: try await SyncTests.deviceToken("phone", on: upstream))
        let id = try await laptop.prefsctl("drafts", "create", "--account", "alice", "--text", "With a file").output
        try await SyncTests.syncWait(laptop)
        try await SyncTests.syncWait(phone)

        let original = laptop.folder.appending(path: "notes.bin").path
        let random = try #require(FileHandle(forReadingAtPath: "/dev/urandom")).readData(ofLength: 6 * 1024 * 1024)
        #expect(FileManager.default.createFile(atPath: original, contents: random))
        proxy.cutNextRequest(after: 2 * 1024 * 1024)
        let attached = try await laptop.prefsctl("drafts", "attach", id, original)
        #expect(attached.status == 0, "\(attached.stderr)")
        let attachment = try #require(UUID(uuidString: attached.output))
        try await SyncTests.syncWait(laptop)
        try await SyncTests.syncWait(phone)

        let copy = phone.folder.appending(path: "copy.bin").path
        let fetched = try await phone.prefsctl("drafts", "fetch", id, attachment.uuidString, "-o", copy)
        #expect(fetched.status == 0, "\(fetched.stderr)")
        #expect(try await DraftsCLITests.sha256(copy) == DraftsCLITests.sha256(original))
        #expect(try await Self.show(id, on: upstream).attachments.map(\.id) == [attachment])
        // The upload was cut (its request ended with no answer), and went on.
        let metrics = try await upstream.raw("GET", "/v1/metrics").body
        #expect(metrics.contains(#"prefsd_requests_total{endpoint="PATCH /v1/blobs/{sha256}",status="other"} 1"#), "\(metrics)")

        await laptop.expectCleanStop()
        await phone.expectCleanStop()
        await upstream.expectCleanStop()
    }

    /// A 50 MiB attachment from the laptop to the phone through the upstream — up before the
    /// draft, down when the phone reads it — byte for byte, with each daemon's peak resident
    /// memory flat; the same bytes in a second draft are not sent again.
    @Test func fiftyMebibytesGoFromDeviceToDeviceWithFlatMemory() async throws {
        let (upstream, port) = try await SyncTests.upstream()
        let url = "http://127.0.0.1:\(port)"
        let laptop = try await SyncTests.device(of: url, secret: try await SyncTests.deviceToken("laptop", on: upstream))
        let phone = try await SyncTests.device(of: url, secret: try await SyncTests.deviceToken("phone", on: upstream))
        let daemons = [laptop, upstream, phone]
        let pids = try daemons.map { try #require($0.process?.processIdentifier) }
        let id = try await laptop.prefsctl("drafts", "create", "--account", "alice", "--text", "With a film").output

        /// Attaches the file at `path` on the laptop, syncs both devices, and fetches it on the
        /// phone into `path` + ".copy"; the attachment's ID.
        func travel(_ path: String) async throws -> String {
            let attached = try await laptop.prefsctl("drafts", "attach", id, path)
            #expect(attached.status == 0, "\(attached.stderr)")
            try await SyncTests.syncWait(laptop)
            try await SyncTests.syncWait(phone)
            let fetched = try await phone.prefsctl("drafts", "fetch", id, attached.output, "-o", path + ".copy")
            #expect(fetched.status == 0, "\(fetched.stderr)")
            return attached.output
        }
        // Warm up every path with a small file, so the baseline holds what any transfer needs.
        let small = laptop.folder.appending(path: "small.bin").path
        #expect(FileManager.default.createFile(atPath: small, contents: Data(repeating: 1, count: 1024 * 1024)))
        _ = try await travel(small)
        let before = try pids.map(LargeAttachmentTests.peakResidentBytes(of:))

        let large = laptop.folder.appending(path: "large.jpg").path
        try LargeAttachmentTests.writeLargeFile(large, size: LargeAttachmentTests.size)
        _ = try await travel(large)
        #expect(try await DraftsCLITests.sha256(large + ".copy") == DraftsCLITests.sha256(large))
        var rises: [String] = []
        for ((daemon, pid), before) in zip(zip(["laptop", "upstream", "phone"], pids), before) {
            let rise = try LargeAttachmentTests.peakResidentBytes(of: pid) - before
            // Flat: bounded, not the file's size. SQLite's page caches (2 MiB a connection, a
            // writer and readers) fill as the bytes pass, and do not grow with a larger file.
            #expect(rise < 24 * 1024 * 1024, "\(daemon)'s peak resident memory rose by \(rise / 1024) KiB for 50 MiB between devices")
            rises.append("\(daemon) \(rise / 1024) KiB")
        }
        print("50 MiB from device to device: peak resident memory rose by \(rises.joined(separator: ", "))")

        // The same bytes in a second draft: no byte crosses the wire again.
        func uploads() async throws -> String {
            let metrics = try await upstream.raw("GET", "/v1/metrics").body
            return metrics.split(separator: "\n").filter { $0.hasPrefix(#"prefsd_requests_total{endpoint="PATCH /v1/blobs/{sha256}""#) }
                .joined(separator: "\n")
        }
        let sent = try await uploads()
        let second = try await laptop.prefsctl("drafts", "create", "--account", "alice", "--text", "The same film").output
        #expect(try await laptop.prefsctl("drafts", "attach", second, large).status == 0)
        try await SyncTests.syncWait(laptop)
        #expect(try await Self.show(second, on: upstream).attachments.first?.sha256 == DraftsCLITests.sha256(large))
        #expect(try await uploads() == sent)

        for daemon in daemons { await daemon.expectCleanStop() }
    }
}
