import Foundation
import PrefsKit

/// An upstream taking in a device's pushed changes, inside one batch's transaction: each once
/// only (by device and sequence number), applied where its base is current, resolved by the
/// key's ``MergeRule`` where it is not, and every conflict recorded in the same transaction.
extension WriteBatch {
    /// How far ahead of the upstream's clock a device's stamp may be before it is clamped, in
    /// milliseconds: five minutes, so that a device whose clock is wrong cannot win every
    /// conflict for as long as it is.
    static let toleratedSkew: Int64 = 5 * 60 * 1000

    /// Takes in the changes `request` pushes from `device`, whose token may write at `reach`,
    /// in sequence order, preference and draft changes alike; returns what became of each, and
    /// the rules of the conflicts it recorded.
    func takeIn(_ request: SyncRequest, from device: String, reach: ScopePath) throws
        -> (results: [SyncAnswer.Result], draftResults: [SyncAnswer.DraftResult], conflictRules: [SyncConflict.Rule])
    {
        // Answers and conflicts carry revisions: where writers run side by side, the batch runs
        // again rather than moving them.
        dependsOnEverything()
        conflictRules = []
        let requestContext = context
        defer { context = requestContext }
        var applied = try connection.appliedSequence(ofDevice: device)
        var results: [SyncAnswer.Result] = []
        var draftResults: [SyncAnswer.DraftResult] = []
        results.reserveCapacity(request.mutations.count)
        let latestAccepted = Int64(time * 1000) + Self.toleratedSkew
        /// The device's stamp, clamped to the upstream's clock, and the context its change is
        /// made in.
        func stamped(_ stamp: SyncStamp, author: String?, reason: String?) -> SyncStamp {
            var stamp = stamp.clamped(toAtMost: latestAccepted)
            stamp.device = device
            var origin = requestContext.origin
            origin.author = ChangeAuthor(name: "token:\(device)", agent: author, host: origin.author?.host)
            origin.reason = reason
            context = WriteContext(origin: origin, sync: .device(stamp))
            return stamp
        }
        var preferences = request.mutations[...]
        var drafts = request.drafts[...]
        while let seq = [preferences.first?.seq, drafts.first?.seq].compactMap({ $0 }).min() {
            if let draft = drafts.first, draft.seq == seq {
                drafts.removeFirst()
                guard seq > applied else {
                    draftResults.append(try draftResult(draft, .duplicate))
                    continue
                }
                applied = seq
                let stamp = stamped(draft.stamp, author: draft.author, reason: draft.reason)
                var stamps = draft.stamps.mapValues { $0.clamped(toAtMost: latestAccepted) }
                for field in stamps.keys { stamps[field]?.device = device }
                draftResults.append(try takeIn(draft, stamped: stamp, fieldStamps: stamps, from: device, reach: reach))
                continue
            }
            let mutation = preferences.removeFirst()
            let entry = SyncEntry(key: mutation.key, scope: mutation.scope)
            var taken: SyncAnswer.Result
            if seq > applied {
                applied = seq
                let stamp = stamped(mutation.stamp, author: mutation.author, reason: mutation.reason)
                taken = try takeIn(mutation, stamped: stamp, from: device, reach: reach, entry: entry)
            } else {
                taken = try result(mutation, .duplicate, entry: entry)
            }
            // Of an entry beyond its reach the device learns nothing: only that its change did not
            // go (and so it drops its own copy).
            if !reach.contains(entry.scope), !entry.scope.contains(reach) {
                taken.revision = 0
                taken.value = nil
            }
            results.append(taken)
        }
        try connection.storeAppliedSequence(applied, ofDevice: device)
        return (results, draftResults, conflictRules)
    }

    /// Takes in one change, made at `stamp`.
    private func takeIn(
        _ mutation: SyncRequest.Mutation, stamped stamp: SyncStamp, from device: String, reach: ScopePath, entry: SyncEntry
    ) throws -> SyncAnswer.Result {
        let name: KeyName
        do {
            name = try KeyName(mutation.key)
            guard reach.contains(mutation.scope) else {
                throw PrefsError(
                    .forbidden, "The device '\(device)' may write at \(reach.path) and below; \(mutation.scope.path) is outside it.")
            }
        } catch let error as PrefsError {
            return try refuse(mutation, stamped: stamp, entry: entry, because: error)
        }
        let current = state(of: mutation.key)?.values[mutation.scope]
        // A change made before the device's first sync fills only what is absent (and meets a
        // deletion as any change does, below).
        if mutation.ifAbsent == true, current != nil {
            let detail = "It was made before the device's first sync, so it fills only what is absent."
            return try recordLoss(mutation, stamped: stamp, entry: entry, rule: .init(.upstream), detail: detail)
        }
        // The device had seen every change of the entry up to its base. A value stored at or
        // before it is unchanged since; no value is unchanged unless a deletion came after it.
        let last: LoggedChange?
        if let current {
            guard current.revision > mutation.base else {
                return try applyOrRefuse(mutation, value: mutation.value, name: name, stamped: stamp, entry: entry, outcome: .applied)
            }
            last = try connection.lastChange(of: mutation.key, at: mutation.scope, after: current.revision - 1)
        } else {
            last = try connection.lastChange(of: mutation.key, at: mutation.scope, after: mutation.base)
            guard last != nil else {
                return try applyOrRefuse(mutation, value: mutation.value, name: name, stamped: stamp, entry: entry, outcome: .applied)
            }
        }
        // The entry changed since the device's base: by whom, and when?
        if let lastStamp = last?.stamp, lastStamp.device == device {
            // The device's own change, taken in after its base: this one follows it.
            return try applyOrRefuse(mutation, value: mutation.value, name: name, stamped: stamp, entry: entry, outcome: .applied)
        }
        let upstreamStamp = last.map { $0.stamp ?? SyncStamp(milliseconds: Int64($0.time * 1000), counter: 0, device: "") }
        let rule = state(of: mutation.key)?.schema?.merge ?? .default
        let resolution = ConflictResolution(
            rule, base: mutation.baseValue,
            upstream: .init(value: current?.value, stamp: upstreamStamp ?? SyncStamp(milliseconds: 0, counter: 0, device: "")),
            device: .init(value: mutation.value, stamp: stamp))
        guard resolution.upstreamLost || resolution.deviceLost else {
            return try result(mutation, .applied, entry: entry)
        }
        if resolution.upstreamLost {
            if resolution.outcome == .merged { context.sync = nil }
            do {
                try place(resolution.value, name: name, at: mutation.scope)
            } catch let error as PrefsError {
                return try refuse(mutation, stamped: stamp, entry: entry, because: error)
            }
        }
        var losers: [SyncConflict.Side] = []
        if resolution.deviceLost {
            losers.append(.init(value: mutation.value, device: device, stamp: stamp, sequence: mutation.seq))
        }
        if resolution.upstreamLost {
            let lastDevice = upstreamStamp.flatMap { $0.device.isEmpty ? nil : $0.device }
            losers.append(.init(value: current?.value, device: lastDevice, stamp: upstreamStamp, revision: current?.revision))
        }
        let winnerDevice = resolution.outcome == .device ? device : (resolution.outcome == .upstream ? upstreamStamp?.device : nil)
        let winnerStamp: SyncStamp? = resolution.outcome == .device ? stamp : (resolution.outcome == .upstream ? upstreamStamp : nil)
        let conflict = try recordConflict(
            entry: entry, rule: .init(rule),
            winner: .init(value: resolution.value, device: winnerDevice.flatMap { $0.isEmpty ? nil : $0 }, stamp: winnerStamp),
            losers: losers, detail: nil)
        return try result(mutation, .resolved, entry: entry, conflict: conflict)
    }

    /// Applies `value` (nil: a reset) as the device's change; refuses it, recording it as a
    /// loser, if the upstream's rules do (a lock, the schema).
    private func applyOrRefuse(
        _ mutation: SyncRequest.Mutation, value: JSONValue?, name: KeyName, stamped stamp: SyncStamp, entry: SyncEntry,
        outcome: SyncAnswer.Result.Outcome
    ) throws -> SyncAnswer.Result {
        do {
            try place(value, name: name, at: mutation.scope)
        } catch let error as PrefsError {
            return try refuse(mutation, stamped: stamp, entry: entry, because: error)
        }
        return try result(mutation, outcome, entry: entry)
    }

    /// Sets `value` at `scope`, or resets it there when nil.
    private func place(_ value: JSONValue?, name: KeyName, at scope: ScopePath) throws {
        if let value {
            _ = try setValue(name, to: value, scope: scope)
        } else {
            _ = try resetValue(name, scope: scope, recursive: false)
        }
    }

    /// Records a change the upstream could not apply, kept as a conflict's loser.
    private func refuse(_ mutation: SyncRequest.Mutation, stamped stamp: SyncStamp, entry: SyncEntry, because error: PrefsError)
        throws -> SyncAnswer.Result
    {
        var result = try recordLoss(mutation, stamped: stamp, entry: entry, rule: .refused, detail: error.message)
        result.outcome = .refused
        return result
    }

    /// Records that the entry stays as it is and `mutation` lost.
    private func recordLoss(
        _ mutation: SyncRequest.Mutation, stamped stamp: SyncStamp, entry: SyncEntry, rule: SyncConflict.Rule, detail: String
    ) throws -> SyncAnswer.Result {
        let current = state(of: entry.key)?.values[entry.scope]
        let conflict = try recordConflict(
            entry: entry, rule: rule, winner: .init(value: current?.value, revision: current?.revision),
            losers: [.init(value: mutation.value, device: stamp.device, stamp: stamp, sequence: mutation.seq)], detail: detail)
        return try result(mutation, .resolved, entry: entry, conflict: conflict)
    }

    /// Records a conflict: a `conflict` change in the log, and its row. Returns its revision.
    func recordConflict(
        entry: SyncEntry, rule: SyncConflict.Rule, winner: SyncConflict.Side, losers: [SyncConflict.Side], detail: String?
    ) throws -> Revision {
        var winner = winner
        if winner.revision == nil { winner.revision = state(of: entry.key)?.values[entry.scope]?.revision }
        let conflict = SyncConflict(
            revision: revision + 1, key: entry.key, scope: entry.scope, rule: rule, winner: winner, losers: losers,
            time: Date(timeIntervalSince1970: time),
            detail: detail)
        context.sync = nil
        conflictRules.append(rule)
        try recordEvent(ChangeEvent(revision: 0, kind: .conflict, key: entry.key, scope: entry.scope, value: try conflict.jsonValue))
        try connection.insertConflict(conflict)
        return conflict.revision
    }

    /// What became of `mutation`: the entry as the batch leaves it — its value and revision, or,
    /// with no value, the revision of the deletion that removed it (0 if it never had one), so
    /// that a device can order what it hears of the entry, however late an answer comes.
    private func result(
        _ mutation: SyncRequest.Mutation, _ outcome: SyncAnswer.Result.Outcome, entry: SyncEntry, conflict: Revision? = nil
    ) throws -> SyncAnswer.Result {
        let stored = state(of: entry.key)?.values[entry.scope]
        let revision = try stored?.revision ?? connection.lastChange(of: entry.key, at: entry.scope, after: 0)?.event.revision ?? 0
        return SyncAnswer.Result(
            seq: mutation.seq, outcome: outcome, key: entry.key, scope: entry.scope, revision: revision, value: stored?.value,
            conflict: conflict)
    }
}

extension SyncConflict {
    /// The conflict as a JSON value: what its `conflict` change carries.
    var jsonValue: JSONValue {
        get throws { try JSONValue(parsing: WireJSON.encoder().encode(self)) }
    }
}
