/// What each of prefsd's metric families measures: the `# HELP` line of its scrape.
///
/// swift-prometheus keeps metrics made through swift-metrics without help text (its factory
/// passes none, and a family registered with one cannot be made again without it), so
/// ``MetricsEndpoint`` writes these lines into the scrape, each before its family's `# TYPE`.
enum MetricHelp {
    /// Help text by family name.
    static let texts: [String: String] = [
        "prefsd_requests_total": "Requests answered, by endpoint (method and path template; none: no endpoint) and status.",
        "prefsd_token_requests_total":
            "Requests on the TCP listener, by the token's name (default: the token file's; none: no token accepted) and outcome (allowed, forbidden, unauthorized).",
        "prefsd_request_duration_seconds": "Seconds from taking a request in to its answer (a watch: to its first byte), by endpoint and status.",
        "prefsd_commits_total": "Transactions this host committed (group commits).",
        "prefsd_commit_batch_requests": "Requests carried by each committed transaction.",
        "prefsd_commit_seconds": "Seconds each commit took to be durable (its sync).",
        "prefsd_commit_rebases_total": "Batches committed after other hosts' changes, their revisions moved past those.",
        "prefsd_commit_conflicts_total": "Batches run again because another host changed what they read.",
        "prefsd_watch_events_total": "Events queued to watchers, replayed and live, notices included.",
        "prefsd_watch_overflows_total": "Watches ended because their watcher fell too far behind.",
        "prefsd_watch_compacted_total": "Watches refused or ended because the change log no longer held their since revision.",
        "prefsd_watches_open": "Watches open now.",
        "prefsd_change_log_changes": "Revisions the change log holds (newest - oldest + 1).",
        "prefsd_applied_revision": "The newest revision this host has taken in.",
        "prefsd_revisions_behind": "Revisions the shared database has that this host has not taken in yet.",
        "prefsd_sync_outbox": "On a replica: local changes still to be pushed to the upstream.",
        "prefsd_sync_lag_revisions": "On a replica: the upstream's revisions (as of the last exchange) not taken in yet.",
        "prefsd_sync_exchanges_total": "On a replica: exchanges with the upstream, by outcome (ok, failed).",
        "prefsd_sync_mutations_total": "On an upstream: devices' changes taken in, by outcome (applied, resolved, duplicate, refused).",
        "prefsd_sync_conflicts_total": "On an upstream: conflicts resolved, by rule (lww, max, min, union, upstream, refused).",
    ]

    /// `scrape` (Prometheus' text format) with a `# HELP` line before the `# TYPE` line of each
    /// family of prefsd's.
    static func adding(to scrape: [UInt8]) -> [UInt8] {
        let typePrefix = Array("# TYPE ".utf8)
        var result: [UInt8] = []
        result.reserveCapacity(scrape.count + 2048)
        var lines = scrape.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        if lines.last?.isEmpty == true { lines.removeLast() }  // after the text's last newline
        for line in lines {
            if line.starts(with: typePrefix) {
                let name = String(decoding: line.dropFirst(typePrefix.count).prefix { $0 != UInt8(ascii: " ") }, as: UTF8.self)
                if let text = texts[name] {
                    result += Array("# HELP \(name) \(text)\n".utf8)
                }
            }
            result += line
            result.append(UInt8(ascii: "\n"))
        }
        return result
    }
}
