/// A load on one server, measured with the CPU it costs that server's process per request.
struct MeteredLoad {
    /// The server's process.
    let meter: ProcessMeter
    /// How many requests one run of ``load`` sends.
    let requests: Int
    /// Runs the load and returns its rate.
    let load: () throws -> Double

    init(_ meter: ProcessMeter, requests: Int, _ load: @escaping () throws -> Double) {
        self.meter = meter
        self.requests = requests
        self.load = load
    }

    /// Runs the load once: its rate, and the CPU µs per request its server spent.
    func measure() throws -> (rate: Double, cpu: Double) {
        let before = meter.cpuSeconds
        let rate = try load()
        return (rate, (meter.cpuSeconds - before) / Double(requests) * 1e6)
    }

    /// Each of `loads` `rounds` times, in turns (``Load/interleavedMedians(rounds:_:)-([()->[Double]])``):
    /// the median rate and CPU µs per request of each.
    static func inTurns(rounds: Int, _ loads: [MeteredLoad]) throws -> [(rate: Double, cpu: Double)] {
        try Load.interleavedMedians(
            rounds: rounds,
            loads.map { load in
                {
                    let measured = try load.measure()
                    return [measured.rate, measured.cpu]
                }
            }
        ).map { ($0[0], $0[1]) }
    }
}
