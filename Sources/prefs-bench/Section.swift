import ArgumentParser

/// The sections of the benchmark, as `--only` names them.
enum Section: String, CaseIterable, ExpressibleByArgument {
    case writes, history, watchers, cli, coldstart, attachments, postgres, tokens, ofrep, reads, sync, merge
    case writeLoad = "write-load"
    case readLoad = "read-load"
    case redisLoad = "redis-load"

    /// The sections of a full run, in the table's order: all but the loads for a profiler.
    static let fullRun: [Section] = allCases.filter { ![.writeLoad, .readLoad, .redisLoad].contains($0) }

    /// What measures the section.
    var measurement: any BenchSection.Type {
        switch self {
        case .writes: WritesSection.self
        case .history: HistorySection.self
        case .watchers: WatchersSection.self
        case .cli: CLISection.self
        case .coldstart: ColdStartSection.self
        case .attachments: AttachmentsSection.self
        case .postgres: PostgresSection.self
        case .tokens: TokensSection.self
        case .ofrep: OFREPSection.self
        case .reads: ReadsSection.self
        case .sync: SyncSection.self
        case .merge: MergeSection.self
        case .writeLoad, .readLoad, .redisLoad: ProfiledLoad.self
        }
    }
}
