import Foundation
import PrefsEngine
import PrefsKit
import PrefsStore
import Synchronization
import TestHarness

/// The time of a simulation, in milliseconds since 1970: every device reads it with a skew of
/// its own, and only the simulation moves it.
final class SimulatedTime: Sendable {
    private let milliseconds: Mutex<Int64>

    init(_ start: Int64) {
        milliseconds = Mutex(start)
    }

    var now: Int64 { milliseconds.withLock { $0 } }

    func advance(by step: Int64) {
        milliseconds.withLock { $0 += step }
    }

    /// A wall clock that reads this time `skew` milliseconds off.
    func wallClock(skew: Int64) -> WallClock {
        WallClock { [self] in Double(now + skew) / 1000 }
    }
}

/// A deterministic simulation of sync: one upstream engine and several replicas, each a SQLite
/// store in its own file, exchanging through a network the simulation controls — which drops,
/// duplicates, delays, reorders and partitions messages — while devices write offline, are
/// killed and restarted from their files, and join late. Everything runs in one task, one step
/// at a time, chosen by a generator seeded with ``seed``: a schedule replays exactly.
final class SyncSimulation {
    /// Where every device's token may write.
    static let reach: ScopePath = "/accounts/alice"
    /// The scopes writes are made at: the reach, below it, above it, and beside it.
    static let scopes: [ScopePath] = ["/", "/accounts", "/accounts/alice", "/accounts/alice/threads/1", "/accounts/bob"]
    /// The scopes whose effective values must agree once the network heals.
    static let checkedScopes: [ScopePath] = ["/accounts/alice", "/accounts/alice/threads/1", "/accounts/alice/threads/2"]
    /// The keys, one per merge rule.
    static let schemas: [String: String] = [
        "sim.lww": #"{"type": "string"}"#,
        "sim.max": #"{"type": "int", "merge": "max"}"#,
        "sim.min": #"{"type": "int", "merge": "min"}"#,
        "sim.union": #"{"type": "array", "merge": "union"}"#,
        "sim.kept": #"{"type": "string", "merge": "upstream"}"#,
    ]

    /// A device: a replica's files, and the engine open on them while the device runs.
    final class Device {
        let name: String
        let path: String
        /// How far the device's clock is off, in milliseconds.
        let skew: Int64
        /// The step the device first starts at.
        let joinsAt: Int
        var store: EmbeddedStore?
        /// How many times it has started: answers sent to an earlier run are lost with it.
        var incarnation = 0
        var partitioned = false
        /// Whether it has made any write of its own.
        var wrote = false

        init(name: String, path: String, skew: Int64, joinsAt: Int) {
            self.name = name
            self.path = path
            self.skew = skew
            self.joinsAt = joinsAt
        }
    }

    /// A message on its way.
    struct Message {
        enum Payload {
            case request(SyncRequest)
            case answer(SyncAnswer)
        }

        var device: Int
        var incarnation: Int
        var deliverAt: Int
        var payload: Payload
    }

    /// A local write a device acknowledged: what it must lead to upstream.
    struct Acknowledged {
        var device: String
        var seq: Int64
        var key: String
        var scope: ScopePath
        var value: JSONValue?
        /// The value the device showed at the entry when it wrote (its own changes not yet
        /// pushed included): what a person saw and edited.
        var held: JSONValue?
        /// Whether it only fills what is absent (made before the device's first snapshot).
        var ifAbsent: Bool
        /// The device's cursor when it wrote: it had taken in every upstream change up to it.
        var cursor: Revision
    }

    let seed: UInt64
    private var random: SplitMix64
    let time = SimulatedTime(1_800_000_000_000)
    let folder: URL
    private(set) var upstream: EmbeddedStore!
    private(set) var devices: [Device] = []
    private var network: [Message] = []
    private(set) var step = 0
    /// The local writes devices acknowledged.
    private(set) var acknowledged: [Acknowledged] = []
    /// What the upstream made of each pushed change, by `device#seq`, as it answered (whether
    /// or not the answer arrived).
    private(set) var outcomes: [String: [SyncAnswer.Result]] = [:]
    /// How many snapshots the upstream sent to replicas that had taken one before (their cursor
    /// fell behind the log's compaction).
    private(set) var resnapshots = 0
    /// What the upstream made of each pushed draft change, by `device#seq`, as it answered
    /// (whether or not the answer arrived).
    private(set) var draftOutcomes: [String: [SyncAnswer.DraftResult]] = [:]
    /// The drafts written, on the devices and the upstream, step after step.
    let drafts: DraftWorkload
    /// Whether the schedule writes drafts (``drafts``) beside its preferences.
    let writesDrafts: Bool
    /// What attachments' bytes crossed between the devices and the upstream.
    let blobs = SimulatedBlobs.Ledger()
    /// What happened, step by step, to read when a schedule fails.
    private(set) var trace: [String] = []
    /// Every set and reset of a simulated key the upstream committed, in order, read from its
    /// log as each was committed — before compaction can drop it (``recordUpstreamChanges()``).
    private(set) var upstreamChanges: [LoggedChange] = []
    /// The upstream revision ``upstreamChanges`` is read up to.
    private var recordedThrough: Revision = 0
    /// Whether ``upstreamChanges`` holds every set and reset: false once one exchange made more
    /// changes than the upstream's log keeps (an outbox long offline, pushed at once), and
    /// compaction dropped some before the simulation could read them.
    private(set) var upstreamChangesComplete = true

    /// A simulation whose schedule follows from `seed`; `writesDrafts` false: of preferences
    /// only — the same schedule of them either way (the drafts draw from a generator of their own).
    init(seed: UInt64, writesDrafts: Bool = true) throws {
        self.seed = seed
        random = SplitMix64(seed: seed)
        drafts = DraftWorkload(seed: seed)
        self.writesDrafts = writesDrafts
        // In memory where the system has a tmpfs: thousands of schedules open and close thousands
        // of database files.
        let base = FileManager.default.fileExists(atPath: "/dev/shm") ? URL(filePath: "/dev/shm") : FileManager.default.temporaryDirectory
        folder = base.appending(path: "prefs-sync-sim-\(seed)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    /// Opens the upstream with its schemas and the devices' tokens, and sets the devices up:
    /// 3 to 5, one with a clock days off, one that joins late.
    func start() async throws {
        upstream = try open(path: folder.appending(path: "upstream.sqlite").path, upstream: nil, skew: 0)
        var schemas: [String: PreferenceSchema] = [:]
        for (key, text) in Self.schemas { schemas[key] = try JSONDecoder().decode(PreferenceSchema.self, from: Data(text.utf8)) }
        _ = try await upstream.register(schemas: schemas)
        try await recordUpstreamChanges()
        let count = Int.random(in: 3...5, using: &random)
        for index in 0..<count {
            let name = "device\(index)"
            let skew: Int64 =
                switch index {
                case 0: 0
                case 1: Int64.random(in: -3...3, using: &random) * 86_400_000  // days off
                default: Int64.random(in: -120_000...120_000, using: &random)
                }
            let joinsAt = index == count - 1 ? Int.random(in: 0...150, using: &random) : 0
            devices.append(Device(name: name, path: folder.appending(path: "\(name).sqlite").path, skew: skew, joinsAt: joinsAt))
            _ = try await upstream.createToken(named: name, role: .writer, scope: Self.reach)
        }
    }

    private func open(path: String, upstream: String?, skew: Int64) throws -> EmbeddedStore {
        var configuration = StoreConfiguration.forTests()
        configuration.durability = .normal
        configuration.upstream = upstream
        // A short log, so that compaction passes replicas' cursors.
        configuration.retainChanges = 40
        let storage = try SQLiteStorage(path: path, durability: .normal)
        return try EmbeddedStore(storage: storage, configuration: configuration, wallClock: time.wallClock(skew: skew))
    }

    // MARK: Steps

    /// Runs `count` random steps.
    func run(steps count: Int) async throws {
        for _ in 0..<count {
            step += 1
            for (index, device) in devices.enumerated() where device.store == nil && device.joinsAt <= step {
                try startDevice(index)
            }
            try await deliverDue()
            try await writeDraft()
            let roll = Int.random(in: 0..<100, using: &random)
            do {
                switch roll {
                case 0..<30: try await localWrite()
                case 30..<40: try await upstreamWrite()
                case 40..<70: try await sendExchange()
                case 70..<74: try await restartDevice()
                case 74..<78: togglePartition()
                default: time.advance(by: Int64.random(in: 1...5_000, using: &random))
                }
            } catch {
                trace.append("\(step) failed (roll \(roll)): \(error)")
                throw error
            }
        }
    }

    private func startDevice(_ index: Int) throws {
        let device = devices[index]
        device.store = try open(path: device.path, upstream: "sim://upstream", skew: device.skew)
        device.incarnation += 1
        trace.append("\(step) start \(device.name)#\(device.incarnation)")
    }

    private func running() -> [Int] {
        devices.indices.filter { devices[$0].store != nil }
    }

    private func randomValue(for key: String) -> JSONValue {
        switch key {
        case "sim.max", "sim.min": .integer(Int64.random(in: 0...100, using: &random))
        case "sim.union": .array((0..<Int.random(in: 0...3, using: &random)).map { _ in .string("t\(Int.random(in: 0...5, using: &random))") })
        default: .string("v\(Int.random(in: 0...1_000_000, using: &random))")
        }
    }

    private func randomEntry() -> (key: String, scope: ScopePath) {
        let key = Self.schemas.keys.sorted()[Int.random(in: 0..<Self.schemas.count, using: &random)]
        // Mostly within the reach; sometimes above it or beside it (refused).
        let scopes: [ScopePath] = ["/accounts/alice", "/accounts/alice", "/accounts/alice/threads/1", "/", "/accounts/bob"]
        return (key, scopes[Int.random(in: 0..<scopes.count, using: &random)])
    }

    private func localWrite() async throws {
        guard let index = running().randomElement(using: &random), let store = devices[index].store else { return }
        let (key, scope) = randomEntry()
        // One write in three deletes: deletions must meet edits often, online and offline.
        let reset = Int.random(in: 0..<3, using: &random) == 0
        let value: JSONValue? = reset ? JSONValue?.none : randomValue(for: key)
        let before = store.replicaStatus?.outbox ?? 0
        // What the device showed at the entry itself (not inherited) when it wrote.
        let shown = try await store.resolve(key, scope: scope)
        let held = shown.source == .scope(scope) ? shown.value : nil
        trace.append("\(step) \(devices[index].name) writes \(key)@\(scope.path)=\(value?.canonicalText ?? "reset")")
        do {
            if let value {
                _ = try await store.set(try KeyName(key), to: value, scope: scope, ifRevision: nil)
            } else {
                _ = try await store.reset(try KeyName(key), scope: scope, recursive: false, ifRevision: nil)
            }
        } catch let error as PrefsError where error.code == .forbidden {
            trace.append("\(step) \(devices[index].name) refused \(key)@\(scope.path): \(error.message)")
            return
        }
        devices[index].wrote = true
        guard let status = store.replicaStatus, status.outbox > before,
            let last = store.syncRequest(pushing: true)?.mutations.last
        else { return }
        acknowledged.append(
            Acknowledged(
                device: devices[index].name, seq: last.seq, key: key, scope: scope, value: value, held: held,
                ifAbsent: last.ifAbsent == true, cursor: status.cursor))
        trace.append("\(step) \(devices[index].name) wrote #\(last.seq) \(key)@\(scope.path)=\(value?.canonicalText ?? "reset")")
    }

    /// A draft write, on a device or the upstream, if the draft workload makes one at this step.
    private func writeDraft() async throws {
        guard writesDrafts else { return }
        switch drafts.nextWriter(among: running()) {
        case .device(let index):
            let device = devices[index]
            trace.append("\(step) \(device.name) \(try await drafts.write(on: device.store!, as: device.name))")
        case .upstream:
            trace.append("\(step) upstream \(try await drafts.write(on: upstream, as: "upstream")) at \(upstream.committedRevision)")
            try await recordUpstreamChanges()
        case nil:
            return
        }
    }

    /// The upstream writes directly: a set, or (one in three) a reset — mostly of an entry it
    /// holds, so that deletions remove values devices hold, edit offline, or have yet to push.
    private func upstreamWrite() async throws {
        var (key, scope) = randomEntry()
        if Int.random(in: 0..<3, using: &random) == 0 {
            let held = try await upstream.dump(scope: "/").values.filter { Self.schemas[$0.key] != nil }
                .sorted { ($0.key, $0.scope) < ($1.key, $1.scope) }
            if Int.random(in: 0..<4, using: &random) > 0, let entry = held.randomElement(using: &random) {
                (key, scope) = (entry.key, entry.scope)
            }
            _ = try await upstream.reset(try KeyName(key), scope: scope, recursive: false, ifRevision: nil)
            trace.append("\(step) upstream reset \(key)@\(scope.path) at \(upstream.committedRevision)")
        } else {
            let value = randomValue(for: key)
            _ = try await upstream.set(try KeyName(key), to: value, scope: scope, ifRevision: nil)
            trace.append("\(step) upstream set \(key)@\(scope.path)=\(value.canonicalText) at \(upstream.committedRevision)")
        }
        try await recordUpstreamChanges()
    }

    /// Appends to ``upstreamChanges`` the sets and resets of simulated keys the upstream
    /// committed since it last read; notes if compaction dropped any of them first (the log
    /// keeps 40 changes, and the simulation reads it after every change it makes upstream).
    private func recordUpstreamChanges() async throws {
        let through = upstream.committedRevision
        guard through > recordedThrough else { return }
        let page = try await upstream.storage.changeLog(after: recordedThrough, through: through, limit: Int(through - recordedThrough))
        let revisions = page.changes.map(\.event.revision)
        if revisions != Array(recordedThrough + 1...through) {
            upstreamChangesComplete = false
            trace.append("\(step) the upstream's log dropped changes after \(recordedThrough) before the simulation read them")
        }
        upstreamChanges += page.changes.filter { change in
            (change.event.kind == .set || change.event.kind == .reset) && change.event.scope != nil
                && Self.schemas[change.event.key ?? ""] != nil
        }
        recordedThrough = through
    }

    private func sendExchange() async throws {
        guard let index = running().randomElement(using: &random), let store = devices[index].store,
            let request = store.syncRequest(pushing: Bool.random(using: &random))
        else { return }
        // The bytes its drafts add go first, as a device's exchange sends them; cut off, it
        // sends nothing.
        do {
            try await store.uploadAttachments(of: request.drafts, through: transport(of: devices[index]))
        } catch let error as PrefsError where error.code == .unreachable {
            trace.append("\(step) \(devices[index].name) could not upload: \(error.message)")
            return
        }
        send(.request(request), device: index)
    }

    /// `device`'s way to the upstream for attachments' bytes (and a last exchange).
    func transport(of device: Device) -> SimulatedBlobs {
        SimulatedBlobs(upstream: upstream, device: device, ledger: blobs)
    }

    /// Puts a message on the network: lost if its device is cut off or by chance, else
    /// delivered after a random delay, and sometimes twice.
    private func send(_ payload: Message.Payload, device index: Int) {
        let device = devices[index]
        let roll = Int.random(in: 0..<100, using: &random)
        guard !device.partitioned, roll >= 10 else {
            trace.append("\(step) lost a message of \(device.name)")
            return
        }
        let copies = roll < 15 ? 2 : 1
        for _ in 0..<copies {
            network.append(
                Message(
                    device: index, incarnation: device.incarnation, deliverAt: step + Int.random(in: 0...6, using: &random),
                    payload: payload))
        }
    }

    /// Delivers the messages due, in a random order.
    private func deliverDue() async throws {
        var due = network.filter { $0.deliverAt <= step }
        network.removeAll { $0.deliverAt <= step }
        due.shuffle(using: &random)
        for message in due {
            do {
                try await deliver(message)
            } catch {
                trace.append("\(step) delivering to \(devices[message.device].name) failed: \(error)")
                throw error
            }
        }
    }

    private func deliver(_ message: Message) async throws {
        let device = devices[message.device]
        switch message.payload {
        case .request(let request):
            guard let answer = try await serve(request, from: device) else { return }
            send(.answer(answer), device: message.device)
        case .answer(let answer):
            guard let store = device.store, device.incarnation == message.incarnation else { return }
            try await store.takeIn(answer)
            trace.append("\(step) \(device.name) took in \(answer.results.count) results, \(answer.changes.count) changes to \(answer.cursor)")
        }
    }

    /// The upstream serves `request`; its answer is noted in ``outcomes`` whether or not it
    /// arrives.
    private func serve(_ request: SyncRequest, from device: Device) async throws -> SyncAnswer? {
        let grant = AccessGrant(token: device.name, role: .writer, scope: Self.reach)
        let answer = try await upstream.exchange(request, grant: grant, context: WriteContext())
        try await recordUpstreamChanges()
        for result in answer.results { outcomes["\(device.name)#\(result.seq)", default: []].append(result) }
        for result in answer.draftResults ?? [] { draftOutcomes["\(device.name)#\(result.seq)", default: []].append(result) }
        if answer.snapshot != nil, request.cursor != 0 { resnapshots += 1 }
        let served =
            answer.results.map { "#\($0.seq) \($0.outcome)" }
            + (answer.draftResults ?? []).map { "#\($0.seq) draft \($0.id.short) \($0.outcome)" }
        trace.append("\(step) upstream served \(device.name): \(served)")
        return answer
    }

    private func restartDevice() async throws {
        guard let index = running().randomElement(using: &random), let store = devices[index].store else { return }
        await store.close()
        devices[index].store = nil
        trace.append("\(step) killed \(devices[index].name)")
        try startDevice(index)
    }

    private func togglePartition() {
        guard let index = devices.indices.randomElement(using: &random) else { return }
        devices[index].partitioned.toggle()
        trace.append("\(step) \(devices[index].name) \(devices[index].partitioned ? "cut off" : "back")")
    }

    // MARK: Healing

    /// Ends the faults: every device runs, nothing is lost or cut off, and each exchanges
    /// directly until it is in step with the upstream, round after round until no round changes
    /// the upstream.
    func heal() async throws {
        network.removeAll()
        for (index, device) in devices.enumerated() {
            device.partitioned = false
            if device.store == nil { try startDevice(index) }
        }
        for round in 0..<6 {
            let before = upstream.committedRevision
            for device in devices {
                try await exchangeUntilInStep(device)
            }
            if round > 0, upstream.committedRevision == before { break }
        }
        // One exchange each as a running device makes them: it then reads attachments' bytes
        // through the same way.
        for device in devices {
            guard let store = device.store, await store.exchange(through: transport(of: device), pushing: true, wait: nil) else {
                throw PrefsError(.internal, "\(device.name)'s last exchange failed: \(String(describing: device.store?.replicaStatus?.lastExchange))")
            }
        }
    }

    /// Exchanges directly until `device` has nothing to push and has every change.
    func exchangeUntilInStep(_ device: Device) async throws {
        guard let store = device.store else { return }
        for _ in 0..<20 {
            guard let request = store.syncRequest(pushing: true) else { return }
            try await store.uploadAttachments(of: request.drafts, through: transport(of: device))
            let answer = try await serve(request, from: device)!
            try await store.takeIn(answer)
            if answer.more != true, store.replicaStatus?.outbox == 0, answer.cursor == upstream.committedRevision { return }
        }
        throw PrefsError(.internal, "\(device.name) is not in step after 20 exchanges.")
    }

    /// A new device, with a token of its own, started now and with nothing written.
    func addDevice() async throws -> Device {
        let name = "device\(devices.count)"
        _ = try await upstream.createToken(named: name, role: .writer, scope: Self.reach)
        devices.append(Device(name: name, path: folder.appending(path: "\(name).sqlite").path, skew: 0, joinsAt: step))
        try startDevice(devices.count - 1)
        return devices[devices.count - 1]
    }

    func close() async {
        for device in devices { await device.store?.close() }
        await upstream?.close()
        try? FileManager.default.removeItem(at: folder)
    }
}
