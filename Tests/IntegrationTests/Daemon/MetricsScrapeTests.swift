import Foundation
import PrefsClient
import PrefsKit
import TestHarness
import Testing

/// `GET /v1/metrics` as Prometheus reads it: each scrape is parsed by `prometheus_client`'s own
/// text parser (Python), and the counters must move by exactly the requests made — on every
/// listener and path, the raw-bytes fast path and the memo included.
@Suite(.enabled(if: metricsParserInstalled || ProcessInfo.processInfo.environment["CI"] == "true"))
struct MetricsScrapeTests {
    /// Reads the exposition in the file named by its argument with prometheus_client's parser,
    /// and prints every sample as JSON.
    static let parser = """
        import json, sys
        from prometheus_client.parser import text_string_to_metric_families
        samples = []
        for family in text_string_to_metric_families(open(sys.argv[1]).read()):
            for sample in family.samples:
                samples.append({"name": sample.name, "labels": sample.labels, "value": sample.value})
        print(json.dumps(samples))
        """

    /// One sample of a scrape.
    struct Sample: Decodable {
        var name: String
        var labels: [String: String]
        var value: Double
    }

    /// A scrape, parsed.
    struct Scrape {
        var samples: [Sample]

        /// The sum of the samples named `name` whose labels include `labels`.
        func value(_ name: String, _ labels: [String: String] = [:]) -> Double {
            samples.filter { sample in sample.name == name && labels.allSatisfy { sample.labels[$0.key] == $0.value } }
                .reduce(0) { $0 + $1.value }
        }
    }

    /// Scrapes `listening`'s daemon on `path` and parses the answer with prometheus_client.
    static func scrape(_ listening: ListeningDaemon, on path: HTTPPath) async throws -> Scrape {
        let answer = try #require(try await listening.exchange("GET /v1/metrics HTTP/1.1\r\nHost: t\r\n\r\n", on: path))
        #expect(answer.status == 200, "\(answer.text)")
        #expect(answer.header("content-type") == "text/plain; version=0.0.4; charset=utf-8")
        return try await parse(answer.text)
    }

    /// Scrapes `daemon` on its socket and parses the answer with prometheus_client.
    static func scrape(_ daemon: Daemon) async throws -> Scrape {
        let answer = try await daemon.raw("GET", "/v1/metrics")
        #expect(answer.status == 200, "\(answer.body)")
        return try await parse(answer.body)
    }

    /// `text` read by prometheus_client's parser.
    static func parse(_ text: String) async throws -> Scrape {
        let file = FileManager.default.temporaryDirectory.appending(path: "prefsd-scrape-\(UUID().uuidString).txt")
        try text.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let parsed = try await CommandResult.runTool("/usr/bin/python3", ["-c", parser, file.path])
        try #require(
            parsed.status == 0,
            "prometheus_client's parser (python3-prometheus-client) must be installed and read the scrape: \(parsed.stderr)")
        return Scrape(samples: try JSONDecoder().decode([Sample].self, from: Data(parsed.stdout.utf8)))
    }

    @Test func countersMoveByTheRequestsMadeOnEveryPath() async throws {
        let listening = try await ListeningDaemon()
        let read = ["endpoint": "GET /v1/prefs/{key}", "status": "200"]
        let write = ["endpoint": "PUT /v1/prefs/{key}", "status": "200"]
        let stale = ["endpoint": "PUT /v1/prefs/{key}", "status": "412"]
        for path in HTTPPath.allCases {
            let before = try await Self.scrape(listening, on: path)
            for _ in 0..<3 {
                let answer = try await listening.exchange("GET /v1/prefs/m.k?scope=/a HTTP/1.1\r\nHost: t\r\n\r\n", on: path)
                #expect(answer?.status == 200)
            }
            let put = "PUT /v1/prefs/m.k?scope=/a HTTP/1.1\r\nHost: t\r\nContent-Length: 1\r\nIf-Match: 1\r\n\r\n7"
            #expect(try await listening.exchange(put, on: path)?.status == 412)
            let set = "PUT /v1/prefs/m.k?scope=/\(path) HTTP/1.1\r\nHost: t\r\nContent-Length: 1\r\n\r\n7"
            #expect(try await listening.exchange(set, on: path)?.status == 200)
            let after = try await Self.scrape(listening, on: path)

            #expect(after.value("prefsd_requests_total", read) - before.value("prefsd_requests_total", read) == 3, "\(path)")
            #expect(
                after.value("prefsd_request_duration_seconds_count", read) - before.value("prefsd_request_duration_seconds_count", read)
                    == 3, "\(path)")
            #expect(after.value("prefsd_requests_total", write) - before.value("prefsd_requests_total", write) == 1, "\(path)")
            #expect(after.value("prefsd_requests_total", stale) - before.value("prefsd_requests_total", stale) == 1, "\(path)")
            #expect(after.value("prefsd_commits_total") - before.value("prefsd_commits_total") == 1, "\(path)")
            #expect(
                after.value("prefsd_commit_batch_requests_count") - before.value("prefsd_commit_batch_requests_count") == 1, "\(path)")
            #expect(after.value("prefsd_commit_seconds_count") - before.value("prefsd_commit_seconds_count") == 1, "\(path)")
            #expect(
                after.value("prefsd_requests_total", ["endpoint": "GET /v1/metrics", "status": "200"])
                    - before.value("prefsd_requests_total", ["endpoint": "GET /v1/metrics", "status": "200"]) == 1,
                "\(path): the scrape before this one")
        }

        // The latency histogram is cumulative: its +Inf bucket holds every request.
        let last = try await Self.scrape(listening, on: .front)
        #expect(
            last.value("prefsd_request_duration_seconds_bucket", read.merging(["le": "+Inf"]) { $1 })
                == last.value("prefsd_requests_total", read))
        let status = try await listening.daemon.client.status()
        #expect(last.value("prefsd_applied_revision") == Double(status.revision))
        #expect(last.value("prefsd_change_log_changes") == Double(status.revision - status.oldestRevision + 1))

        // On TCP, /v1/metrics is behind the token like everything else.
        let connection = HTTPConnection(try RawSocket(tcpPort: listening.port), authorization: nil)
        connection.send("GET /v1/metrics HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(await connection.response()?.status == 401)
        #expect(
            try await Self.scrape(listening, on: .front).value("prefsd_requests_total", ["endpoint": "none", "status": "401"]) == 1,
            "refused before routing: counted under none")
    }

    @Test func watchesTheirEventsAndCompactedResumesAreCounted() async throws {
        let daemon = try await Daemon(arguments: ["--retain-changes", "4"])
        let client = daemon.client
        for index in 0..<10 { try await client.set("w.k", to: .integer(Int64(index))) }
        let oldest = try await client.status().oldestRevision
        #expect(try await daemon.raw("GET", "/v1/watch?since=1").status == 410)

        var events = client.watch(WatchRequest(keys: ["w.k"], since: oldest)).makeAsyncIterator()
        var received = 0
        while let event = try await events.next() {
            if !event.kind.isNotice { received += 1 }
            if event.revision >= 10 { break }
        }
        let scrape = try await Self.scrape(daemon)
        #expect(scrape.value("prefsd_watches_open") == 1)
        #expect(scrape.value("prefsd_watch_events_total") >= Double(received))
        #expect(received > 0)
        #expect(scrape.value("prefsd_watch_compacted_total") == 1)
        #expect(scrape.value("prefsd_watch_overflows_total") == 0)
        #expect(scrape.value("prefsd_revisions_behind") == 0, "one writer: never behind")
        #expect(scrape.value("prefsd_requests_total", ["endpoint": "GET /v1/watch", "status": "410"]) == 1)

        // prefsctl status shows the main figures.
        let status = try await daemon.prefsctl("status")
        #expect(status.status == 0)
        #expect(status.stdout.contains("commits"), "\(status.stdout)")
        #expect(status.stdout.contains("watch events sent"), "\(status.stdout)")
        withExtendedLifetime(events) {}
    }

    @Test func overflowedWatchesAreCounted() async throws {
        let daemon = try await Daemon(arguments: ["--watch-buffer", "8", "--durability", "normal", "--progress-interval", "0.02"])
        let client = daemon.client
        #expect(try await Self.scrape(daemon).value("prefsd_watch_overflows_total") == 0)
        var (opened, overflowed) = (0, 0)
        for attempt in 0..<100 where overflowed < 3 {
            // Keys of its own: a watch left behind is sent none of the next attempts' changes.
            let prefix = "o\(attempt)."
            let overflowing = PreferenceBatch(operations: (0..<16).map { PreferenceOperation.set("\(prefix)k\($0)", 1) })
            var kinds: [ChangeEvent.Kind] = []
            opened += 1
            for try await event in client.watch(WatchRequest(prefixes: [prefix])) {
                kinds.append(event.kind)
                // Subscribed: more live changes than it may queue.
                if kinds == [.progress] { try await client.apply(overflowing) }
                // A watcher that drains its queue while the batch is published need not overflow.
                if kinds.count > 40 { break }
            }
            if kinds.last == .overflow { overflowed += 1 }
        }
        #expect(overflowed == 3)
        // Each overflow seen is counted; a watch left behind may overflow on progress events
        // before the daemon sees its connection close, and is counted too — each watch once.
        let counted = try await Self.scrape(daemon).value("prefsd_watch_overflows_total")
        #expect(counted >= Double(overflowed) && counted <= Double(opened), "\(counted) of \(opened) watches")
    }

    @Test(.enabled(if: PostgresTestDatabase.isEnabled))
    func aHostOnASharedDatabaseReportsTheRevisionItHasTakenIn() async throws {
        try await withPostgresDatabase { database in
            let writer = try await Daemon(postgresURL: database.url)
            let reader = try await Daemon(postgresURL: database.url)
            let before = try await Self.scrape(reader)
            #expect(before.value("prefsd_applied_revision") == 0)

            var newest: Revision = 0
            for index in 0..<5 { newest = try await writer.client.set("lag.k", to: .integer(Int64(index))).revision }
            try await reader.client.waitForRevision(newest)

            // The other host's writes, taken in from the change log: counted as applied, none behind.
            let after = try await Self.scrape(reader)
            #expect(after.value("prefsd_applied_revision") == Double(newest))
            #expect(after.value("prefsd_revisions_behind") == 0)
            #expect(after.value("prefsd_commits_total") == 0, "the reader committed nothing itself")
            let writers = try await Self.scrape(writer)
            #expect(writers.value("prefsd_applied_revision") == Double(newest))
            #expect(writers.value("prefsd_commits_total") == 5)
            for host in [writer, reader] { _ = await host.stop() }
        }
    }
}

/// Whether python3 and `prometheus_client` look installed. In CI the metrics suite runs
/// regardless, and fails if they are missing (`.ci/run` installs them).
/// Whether Prometheus' own `promtool` is here (Debian's `prometheus`; CI installs it).
let promtoolInstalled = FileManager.default.isExecutableFile(atPath: "/usr/bin/promtool")

/// Every metric family of a scrape has its `# HELP` line, and Prometheus' own linter
/// (`promtool check metrics`) finds nothing to say about the scrape.
@Test(.enabled(if: promtoolInstalled || ProcessInfo.processInfo.environment["CI"] == "true"))
func promtoolFindsNothingToSayAboutAScrape() async throws {
    let daemon = try await Daemon()
    _ = try await daemon.client.set("metrics.a", to: 1, scope: "/")
    _ = try await daemon.client.resolve("metrics.a", scope: "/")
    let scrape = try await daemon.raw("GET", "/v1/metrics").body
    await daemon.stop()
    let families = scrape.split(separator: "\n").filter { $0.hasPrefix("# TYPE ") }.map { $0.split(separator: " ")[2] }
    #expect(families.count >= 14, "\(scrape)")
    for family in families {
        #expect(scrape.contains("# HELP \(family) "), "\(family) has no help text")
    }
    let file = FileManager.default.temporaryDirectory.appending(path: "prefsd-promtool-\(UUID().uuidString).txt")
    try scrape.write(to: file, atomically: true, encoding: .utf8)
    defer { try? FileManager.default.removeItem(at: file) }
    let checked = try await CommandResult.runTool("/bin/sh", ["-c", "/usr/bin/promtool check metrics < \"$0\"", file.path])
    #expect(checked.status == 0 && checked.stdout.isEmpty && checked.stderr.isEmpty, "promtool: \(checked.stdout) \(checked.stderr)")
}

let metricsParserInstalled: Bool = {
    let places = ["/usr/lib/python3/dist-packages", "/usr/local/lib/python3/dist-packages"]
    return FileManager.default.fileExists(atPath: "/usr/bin/python3")
        && places.contains { FileManager.default.fileExists(atPath: "\($0)/prometheus_client/parser.py") }
}()
