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

    /// The metrics, made by `factory`.
    init(factory: any MetricsFactory) {
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
