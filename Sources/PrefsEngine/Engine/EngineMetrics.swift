import CoreMetrics
import PrefsKit

/// What an engine measures, through the metrics factory its ``StoreConfiguration`` names:
/// commits with their batch sizes and times (the sync among them), watches and the events they
/// are sent, watches ended by an overflow or refused as compacted, the change log's size, and the
/// revision this host has taken in — with, on a database other hosts write to, how far it is
/// behind the database's newest.
///
/// Counters move where things happen; the gauges are set by ``PrefsEngine/refreshMetrics()``,
/// when metrics are read, so that keeping them costs nothing in between.
final class EngineMetrics: Sendable {
    /// `prefsd_commits_total`: transactions committed by this host.
    let commits: Counter
    /// `prefsd_commit_batch_requests`: how many requests each committed transaction carried.
    let batchSize: Recorder
    /// `prefsd_commit_seconds`: how long each commit took to be durable (its sync).
    let commitTime: Timer
    /// `prefsd_commit_rebases_total`: batches committed after changes other hosts committed
    /// while they ran, their revisions moved past those.
    let rebases: Counter
    /// `prefsd_commit_conflicts_total`: batches run again because, running alongside other
    /// hosts' writers, they read something one of those changed first.
    let conflicts: Counter
    /// `prefsd_watch_events_total`: events queued to watchers (replayed and live, notices too).
    let eventsSent: Counter
    /// `prefsd_watch_overflows_total`: watches ended because their watcher fell behind.
    let overflows: Counter
    /// `prefsd_watch_compacted_total`: watches refused or ended because the change log no longer
    /// held their `since`.
    let compacted: Counter
    /// `prefsd_watches_open`: watches open now.
    let openWatches: Gauge
    /// `prefsd_change_log_changes`: revisions the change log holds (newest − oldest + 1).
    let changeLogSize: Gauge
    /// `prefsd_applied_revision`: the newest revision this host has taken in.
    let appliedRevision: Gauge
    /// `prefsd_revisions_behind`: on a shared database, how many revisions the database has that
    /// this host has not taken in yet.
    let revisionsBehind: Gauge

    /// `prefsd_sync_outbox`: on a replica, local changes still to be pushed.
    let syncOutbox: Gauge
    /// `prefsd_sync_lag_revisions`: on a replica, how many of the upstream's revisions (as of the
    /// last exchange) it has not taken in.
    let syncLag: Gauge
    /// `prefsd_sync_exchanges_total{outcome}`: on a replica, exchanges with the upstream, `ok` or
    /// `failed`.
    let syncExchanges: [Bool: Counter]
    /// `prefsd_sync_mutations_total{outcome}`: on an upstream, devices' changes taken in, by
    /// outcome (`applied`, `resolved`, `duplicate`, `refused`).
    let syncMutations: [SyncAnswer.Result.Outcome: Counter]
    /// `prefsd_sync_conflicts_total{rule}`: on an upstream, conflicts resolved, by rule.
    let syncConflicts: [String: Counter]

    /// The metrics, made by `factory`.
    init(factory: any MetricsFactory) {
        syncOutbox = Gauge(label: "prefsd_sync_outbox", factory: factory)
        syncLag = Gauge(label: "prefsd_sync_lag_revisions", factory: factory)
        syncExchanges = [
            true: Counter(label: "prefsd_sync_exchanges_total", dimensions: [("outcome", "ok")], factory: factory),
            false: Counter(label: "prefsd_sync_exchanges_total", dimensions: [("outcome", "failed")], factory: factory),
        ]
        let outcomes: [SyncAnswer.Result.Outcome] = [.applied, .resolved, .duplicate, .refused]
        syncMutations = Dictionary(
            uniqueKeysWithValues: outcomes.map {
                ($0, Counter(label: "prefsd_sync_mutations_total", dimensions: [("outcome", $0.rawValue)], factory: factory))
            })
        let rules = MergeRule.allCases.map(\.rawValue) + [SyncConflict.Rule.refused.rawValue]
        syncConflicts = Dictionary(
            uniqueKeysWithValues: rules.map {
                ($0, Counter(label: "prefsd_sync_conflicts_total", dimensions: [("rule", $0)], factory: factory))
            })
        commits = Counter(label: "prefsd_commits_total", factory: factory)
        batchSize = Recorder(label: "prefsd_commit_batch_requests", factory: factory)
        commitTime = Timer(label: "prefsd_commit_seconds", factory: factory)
        rebases = Counter(label: "prefsd_commit_rebases_total", factory: factory)
        conflicts = Counter(label: "prefsd_commit_conflicts_total", factory: factory)
        eventsSent = Counter(label: "prefsd_watch_events_total", factory: factory)
        overflows = Counter(label: "prefsd_watch_overflows_total", factory: factory)
        compacted = Counter(label: "prefsd_watch_compacted_total", factory: factory)
        openWatches = Gauge(label: "prefsd_watches_open", factory: factory)
        changeLogSize = Gauge(label: "prefsd_change_log_changes", factory: factory)
        appliedRevision = Gauge(label: "prefsd_applied_revision", factory: factory)
        revisionsBehind = Gauge(label: "prefsd_revisions_behind", factory: factory)
    }
}
