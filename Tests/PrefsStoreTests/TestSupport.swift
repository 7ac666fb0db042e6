import Foundation
import PrefsEngine
import PrefsKit
import PrefsStore
import TestHarness
import Testing

extension StoreConfiguration {
    /// The defaults, except that no `progress` event can slip into a test's watch streams, and
    /// whatever `configure` changes.
    static func forTests(_ configure: (inout StoreConfiguration) -> Void = { _ in }) -> StoreConfiguration {
        var configuration = StoreConfiguration()
        configuration.progressInterval = .seconds(86_400)
        configure(&configuration)
        return configuration
    }
}

/// A store on its own temporary database; close it at the end, as `withStore` does (closing
/// removes the folder).
func makeStore(_ configure: (inout StoreConfiguration) -> Void = { _ in }) throws -> EmbeddedStore {
    try EmbeddedStore.temporary(configuration: .forTests(configure))
}

/// A new empty folder for a test's own database files. Remove it with `removeFolder`.
func makeFolder() throws -> URL {
    let folder = FileManager.default.temporaryDirectory.appending(path: "prefs-store-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    return folder
}

func removeFolder(_ folder: URL) {
    try? FileManager.default.removeItem(at: folder)
}

/// Runs the `sqlite3` command-line tool on `database` and returns what it prints.
@discardableResult
func sqlite3(_ database: String, _ sql: String) async throws -> String {
    let result = try await CommandResult.runTool("/usr/bin/env", ["sqlite3", database, sql])
    guard result.status == 0 else {
        throw PrefsError(.internal, "sqlite3 \(sql) failed (\(result.status)): \(result.stderr)")
    }
    return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
}

/// Reads a watch stream one event at a time, in the test's own task.
struct WatchReader {
    private var iterator: AsyncThrowingStream<ChangeEvent, any Error>.AsyncIterator

    init(_ stream: AsyncThrowingStream<ChangeEvent, any Error>) {
        iterator = stream.makeAsyncIterator()
    }

    /// The next event, or nil at the end of the stream.
    mutating func next() async throws -> ChangeEvent? {
        try await iterator.next()
    }

    /// Exactly the next `count` events; a stream that ends before is a test failure.
    mutating func take(_ count: Int, sourceLocation: SourceLocation = #_sourceLocation) async throws -> [ChangeEvent] {
        var events: [ChangeEvent] = []
        while events.count < count {
            let event = try await iterator.next()
            guard let event else {
                Issue.record("The watch ended after \(events.count) of \(count) events: \(events)", sourceLocation: sourceLocation)
                break
            }
            events.append(event)
        }
        return events
    }

    /// Every event up to and including the first one at `revision` (or later).
    mutating func through(revision: Revision, sourceLocation: SourceLocation = #_sourceLocation) async throws
        -> [ChangeEvent]
    {
        var events: [ChangeEvent] = []
        while true {
            guard let event = try await iterator.next() else {
                Issue.record("The watch ended before revision \(revision): \(events)", sourceLocation: sourceLocation)
                return events
            }
            events.append(event)
            if event.revision >= revision { return events }
        }
    }

    /// Every remaining event until the stream ends, and the error it ended with, if any.
    mutating func rest() async -> (events: [ChangeEvent], error: (any Error)?) {
        var events: [ChangeEvent] = []
        do {
            while let event = try await iterator.next() { events.append(event) }
            return (events, nil)
        } catch {
            return (events, error)
        }
    }
}

extension ChangeEvent {
    /// A compact description for comparing event lists: `3 set k@/a=1`.
    var summary: String {
        var text = "\(revision) \(kind)"
        if let key { text += " \(key)" }
        if let scope { text += "@\(scope.path)" }
        if let value { text += "=\(value.canonicalText)" }
        if let source { text += " (\(source))" }
        return text
    }
}
