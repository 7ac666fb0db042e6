import Foundation

/// An upstream and two devices of it — A (`laptop`) and B (`phone`) — each reaching it through
/// a counting proxy (``BenchProxy``), in step once made: the sync scenes that count the bytes
/// between devices.
struct ProxiedDevices {
    let upstream: SyncUpstream
    let proxyA: BenchProxy
    let proxyB: BenchProxy
    let a: BenchDaemon
    let b: BenchDaemon

    /// Starts the upstream, the proxies and the devices, and waits until both devices are in
    /// step; what started is stopped if a later step fails.
    init(_ bench: PrefsBench) throws {
        let upstream = try SyncUpstream(prefsd: bench.prefsdURL)
        var started: [() -> Void] = [upstream.stop]
        do {
            let (proxyA, proxyB) = (try BenchProxy(to: upstream.port), try BenchProxy(to: upstream.port))
            started += [proxyA.stop, proxyB.stop]
            let a = try upstream.device("laptop", prefsd: bench.prefsdURL, through: proxyA.port)
            started.append { a.stop() }
            let b = try upstream.device("phone", prefsd: bench.prefsdURL, through: proxyB.port)
            started.append { b.stop() }
            try syncWait([a, b], prefsctl: bench.prefsctlURL)
            (self.upstream, self.proxyA, self.proxyB, self.a, self.b) = (upstream, proxyA, proxyB, a, b)
        } catch {
            for stop in started.reversed() { stop() }
            throw error
        }
    }

    /// Every byte both devices have exchanged with the upstream so far, both ways.
    var bytes: Int { proxyA.bytes + proxyB.bytes }

    /// Stops the devices, the proxies and the upstream.
    func stop() {
        a.stop()
        b.stop()
        proxyA.stop()
        proxyB.stop()
        upstream.stop()
    }
}
