import Foundation

/// ``NIOFloor`` as the benchmark runs it: this executable again, serving the daemon's answer to
/// the GET rows' request on a Unix socket of its own.
final class BenchNIOFloor {
    private let server: BenchServer
    let socketPath: String

    /// Starts the floor answering every request with `answer`.
    init(answer: Data) throws {
        let folder = URL(fileURLWithPath: "/tmp/prefs-bench-nio-\(UUID().uuidString.prefix(8))")
        let socketPath = folder.appending(path: "nio.sock").path
        self.socketPath = socketPath
        server = try BenchServer(
            URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath(), folder: folder,
            arguments: { folder in
                let answerFile = folder.appending(path: "answer")
                try? answer.write(to: answerFile)
                return ["--nio-floor-socket", socketPath, "--nio-floor-answer", answerFile.path]
            },
            ready: { (try? BenchConnection(socketPath: socketPath).request("GET", "/")) == 200 })
    }

    /// Its CPU time and memory.
    var meter: ProcessMeter { server.meter }

    func stop() {
        server.stop()
    }
}
