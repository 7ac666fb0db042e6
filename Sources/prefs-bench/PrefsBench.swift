import ArgumentParser
import Foundation

/// `prefs-bench`: measures prefsd against its targets (docs/benchmarks.md), each with a baseline
/// measured in the same run, and prints one table. Run through Scripts/bench.sh (release build).
@main
struct PrefsBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prefs-bench",
        abstract: "Measures prefsd against its targets and prints one table.",
        discussion: """
            Each measure has a baseline measured in the same run (docs/benchmarks.md). Run it \
            through Scripts/bench.sh, which builds it for release. A section that fails ends the \
            run with its error, stopping the daemons it started.
            """
    )

    @Option(help: ArgumentHelp("The prefsd to measure (default: the one beside prefs-bench).", valueName: "path"))
    var prefsd: String?

    @Option(help: ArgumentHelp("The prefsctl to measure (default: the one beside prefs-bench).", valueName: "path"))
    var prefsctl: String?

    @Option(help: "How many idle watchers of other keys the watchers section opens.")
    var watchers = 10_000

    @Flag(help: "A short run: fewer requests, and one round of each comparison instead of three.")
    var quick = false

    @Option(
        help: ArgumentHelp(
            "The PostgreSQL server the postgres section uses, postgresql://USER@HOST:PORT/postgres; without it, its rows are skipped.",
            valueName: "server-url"))
    var postgres: String?

    @Option(
        help: ArgumentHelp(
            "Run one section. write-load, read-load and redis-load (never part of a full run) hold a daemon (or redis-server) under a steady load for a profiler.",
            valueName: "section"))
    var only: Section?

    @Flag(help: "With --only write-load: plain writes, neither keyed (Idempotency-Key) nor attributed (User-Agent, Prefs-Reason).")
    var plain = false

    @Option(help: .hidden) var nioFloorSocket: String?
    @Option(help: .hidden) var nioFloorAnswer: String?

    func run() async throws {
        // The GET rows' NIO floor (BenchNIOFloor) is this executable serving.
        if let nioFloorSocket, let nioFloorAnswer { return try await NIOFloor.serve(socketPath: nioFloorSocket, answerFile: nioFloorAnswer) }
        var table = ResultTable()
        for section in only.map({ [$0] }) ?? Section.fullRun {
            try await section.measurement.measure(self, into: &table)
        }
        table.print()
    }

    /// The folder of the running prefs-bench, where the build put prefsd and prefsctl beside it.
    private static let binaries = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()

    /// The prefsd to measure.
    var prefsdURL: URL { URL(fileURLWithPath: prefsd ?? Self.binaries.appending(path: "prefsd").path) }
    /// The prefsctl to measure.
    var prefsctlURL: URL { URL(fileURLWithPath: prefsctl ?? Self.binaries.appending(path: "prefsctl").path) }
    /// How many writes a rate of single writes is measured over.
    var writes: Int { quick ? 500 : 2000 }
    /// How many times measures compared in turns are each taken (their medians are compared).
    var rounds: Int { quick ? 1 : 3 }
}
