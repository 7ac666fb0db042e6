import Foundation
import PrefsKit

/// A replica's drafts: each local change of a draft goes to the outbox with the draft's upstream
/// revision it was made on; what the upstream answers and sends is taken in — and a draft changed
/// here meanwhile is rebased on it, as the upstream would merge it.
///
/// A draft has at most one change in flight: its next is pushed once the answer to the one
/// before is taken in, rebased on the draft that answer brings (so that the upstream always
/// merges against a version it keeps).
extension WriteBatch {
    // MARK: Local changes

    /// Adds a local change of draft `id` (from `before` to `after`; nil: none) to the outbox: the
    /// draft as it is now, the fields it changed stamped now. On a store that is not a replica,
    /// or for what the upstream sent, nothing.
    func pushDraftLater(_ id: UUID, before: Draft?, after: Draft?) throws {
        guard replica != nil, context.sync == nil else { return }
        let stamp = replica!.clock.stamp(now: Int64(time * 1000))
        var stamps = pendingDraftMutations(of: id).last?.stamps ?? [:]
        for field in DraftMerge.Field.changed(from: before, to: after) { stamps[field] = stamp }
        try queueDraft(id, after, stamp: stamp, stamps: stamps)
    }

    /// Appends `draft` (nil: deleted) to the outbox as the next change of draft `id`, made on the
    /// upstream's draft as last taken in.
    private func queueDraft(_ id: UUID, _ draft: Draft?, stamp: SyncStamp, stamps: [DraftMerge.Field: SyncStamp]) throws {
        let mutation = DraftMutation(
            seq: replica!.record.nextSequence, id: id, base: draftBase(of: id)?.revision ?? 0, draft: draft,
            stamp: stamp, stamps: stamps, author: context.origin.author?.name, reason: context.origin.reason)
        try connection.appendDraftOutbox(mutation)
        replica!.record.nextSequence += 1
        replica!.record.clock = replica!.clock.latest
        replica!.draftOutboxAdded.append(mutation)
    }

    /// The upstream's draft as this batch sees it.
    func draftBase(of id: UUID) -> DraftBase? {
        if let changed = replica?.draftBases[id] { return changed }
        return replicaState?.draftBase(of: id)
    }

    /// Draft `id`'s outbox entries as this batch sees them, in sequence order.
    private func pendingDraftMutations(of id: UUID) -> [DraftMutation] {
        guard let changes = replica else { return [] }
        let committed = (replicaState?.pendingDraftMutations(of: id) ?? [:]).filter { !changes.outboxRemoved.contains($0.key) }
        let added = changes.draftOutboxAdded.filter { $0.id == id && !changes.outboxRemoved.contains($0.seq) }
        return (Array(committed.values) + added).sorted { $0.seq < $1.seq }
    }

    /// Keeps `base` (nil: none) as what the replica knows of the upstream's draft `id`.
    private func keepDraftBase(_ base: DraftBase?, for id: UUID) throws {
        replica!.draftBases[id] = .some(base)
        try connection.storeDraftBase(base, for: id)
    }

    /// Removes the outbox entries `mutations`.
    private func dropFromOutbox(_ mutations: [DraftMutation]) throws {
        let sequences = mutations.map(\.seq)
        replica!.outboxRemoved.formUnion(sequences)
        try connection.deleteOutbox(sequences: sequences)
    }

    // MARK: The upstream's answer

    /// Takes in what became of a pushed draft change: the upstream's draft becomes the base, and
    /// the local draft — rebased on it if it changed here since.
    func takeIn(_ result: SyncAnswer.DraftResult) throws {
        let pending = pendingDraftMutations(of: result.id)
        // A late or repeated answer: its change was answered already.
        guard let pushed = pending.first(where: { $0.seq == result.seq }) else { return }
        try dropFromOutbox([pushed])
        if let copy = result.copy { try takeIn(SyncAnswer.DraftState(id: copy.id, revision: copy.revision, draft: copy)) }
        var upstream: Draft? = nil
        if result.deleted != true {
            upstream = result.draft ?? pushed.draft
            upstream?.revision = result.revision
        }
        if (draftBase(of: result.id)?.revision ?? -1) < result.revision {
            try keepDraftBase(DraftBase(revision: result.revision, draft: upstream), for: result.id)
        }
        let base = draftBase(of: result.id)
        let later = pending.filter { $0.seq > pushed.seq }
        guard let latest = later.last else {
            try placeDraftFromUpstream(base?.draft, id: result.id)
            return
        }
        // Changed here since: rebase the local draft on the upstream's, and push it as one change.
        try dropFromOutbox(later)
        try rebase(result.id, pushed: pushed.draft, onto: base?.draft, stamped: result.stamps ?? [:], latest: latest)
    }

    /// Rebases the local draft `id`, changed here after `pushed` was pushed, on `upstream` (nil:
    /// deleted there) — by the upstream's rules: an edit beats a delete, fields by stamp, the text
    /// merged, text that cannot be merged kept as a conflicted copy — and queues the result.
    private func rebase(
        _ id: UUID, pushed: Draft?, onto upstream: Draft?, stamped upstreamStamps: [DraftMerge.Field: SyncStamp], latest: DraftMutation
    ) throws {
        let local = try connection.draft(id)
        switch (local, upstream) {
        case (nil, nil):
            return
        case (nil, let upstream?):
            if let pushed, !upstream.hasContent(of: pushed) {
                // Edited elsewhere: the edit wins over the delete made here.
                try placeDraftFromUpstream(upstream, id: id)
            } else {
                try queueDraft(id, nil, stamp: latest.stamp, stamps: latest.stamps)
            }
        case (let local?, nil):
            // Deleted elsewhere: the edit made here brings it back.
            try queueDraft(id, local, stamp: latest.stamp, stamps: latest.stamps)
        case (let local?, let upstream?):
            let merge = DraftMerge(
                base: pushed ?? upstream.withoutContent, upstream: .init(draft: upstream, stamps: upstreamStamps),
                device: .init(draft: local, stamps: latest.stamps))
            var merged = merge.merged
            merged.revision = local.revision
            // Its thread and place merge each on their own: no place outside a thread.
            if merged.thread == nil { merged.position = nil }
            // Its thread is settled once the merged draft, pushed next, is answered.
            try place(merged, id: id)
            // Pushed as made on the upstream's draft, it is taken as it is: its stamps are those of
            // the fields the device's later change won.
            let won = latest.stamps.filter { field, stamp in upstreamStamps[field].map { stamp > $0 } ?? true }
            try queueDraft(id, merged, stamp: latest.stamp, stamps: won)
            if let text = merge.conflictedText {
                var input = DraftInput(local)
                input.text = text
                input.thread = merged.thread
                // Next to the draft, as the upstream places its copies; within the thread as it is
                // here, which may not hold every draft the upstream's places count.
                if let thread = merged.thread, let position = merged.position {
                    input.position = min(position + 1, try connection.drafts(account: nil, thread: thread).count)
                } else {
                    input.position = nil
                }
                let sync = context.sync
                context.sync = nil
                defer { context.sync = sync }
                _ = try createDraft(input, conflictOf: id)
            }
        }
    }

    /// Takes in a draft as the upstream has it, unless the replica knows a later revision of it
    /// — its text made whole from the steps that follow the revision the replica has, when it
    /// came as steps; shows it unless the draft changed here (its change, pushed, is merged by
    /// the upstream). Steps from a revision the replica does not have (which the protocol never
    /// sends) make it start again from a snapshot rather than guess.
    func takeIn(_ state: SyncAnswer.DraftState) throws {
        let known = draftBase(of: state.id)
        if let known, known.revision >= state.revision { return }
        var draft = state.draft
        if let text = state.text {
            guard let known, let knownText = known.draft?.text, known.revision >= text.from,
                let whole = try? text.steps.dropFirst(Int(known.revision - text.from)).reduce(knownText, { try $1.applied(to: $0) })
            else {
                replica!.needsSnapshot = true
                return
            }
            draft?.text = whole
        }
        try keepDraftBase(DraftBase(revision: state.revision, draft: draft), for: state.id)
        guard pendingDraftMutations(of: state.id).isEmpty else { return }
        try placeDraftFromUpstream(draft, id: state.id)
    }

    /// Makes the replica's drafts of the accounts within `reach` those of a snapshot (nil: none
    /// sent), but drafts changed here still to be pushed.
    func takeIn(snapshotDrafts drafts: [Draft]?, reach: ScopePath) throws {
        let sent = Dictionary((drafts ?? []).map { ($0.id, $0) }, uniquingKeysWith: { $1 })
        for local in try connection.drafts(account: nil, thread: nil) where !sent.keys.contains(local.id) {
            guard let scope = try? Self.accountScope(local.account), reach.contains(scope) else { continue }
            guard pendingDraftMutations(of: local.id).isEmpty else { continue }
            try keepDraftBase(nil, for: local.id)
            try placeDraftFromUpstream(nil, id: local.id)
        }
        for draft in sent.values.sorted(by: { ($0.account, $0.thread ?? "", $0.position ?? 0) < ($1.account, $1.thread ?? "", $1.position ?? 0) }) {
            try takeIn(SyncAnswer.DraftState(id: draft.id, revision: draft.revision, draft: draft))
        }
    }

    // MARK: Placing what the upstream decided

    /// Makes the local draft `id` `target` (nil: none), as the upstream has it (``place(_:id:)``),
    /// then settles its threads, where it was and where it is.
    private func placeDraftFromUpstream(_ target: Draft?, id: UUID) throws {
        let was = try connection.draft(id)?.thread
        try place(target, id: id)
        try settle(threads: [was, target?.thread])
    }

    /// Shows every draft of each of `threads` as the upstream has it, once none of them has a
    /// change still to push. A draft moved here moved its neighbours here too, and only its own
    /// change is pushed: the upstream says where they are — where it took the change in, or
    /// where it merged it with another device's move. A draft that goes to another thread
    /// settles that thread too.
    private func settle(threads: [String?]) throws {
        var unsettled = threads.compactMap { $0 }
        var settled: Set<String> = []
        while let thread = unsettled.popLast() {
            guard settled.insert(thread).inserted else { continue }
            let drafts = try connection.drafts(account: nil, thread: thread)
            guard drafts.allSatisfy({ pendingDraftMutations(of: $0.id).isEmpty }) else { continue }
            for draft in drafts {
                guard let base = draftBase(of: draft.id) else { continue }
                try place(base.draft, id: draft.id)
                if let elsewhere = base.draft?.thread, elsewhere != thread { unsettled.append(elsewhere) }
            }
        }
    }

    /// Makes the local draft `id` `target` (nil: none), as the upstream has it: its fields, place
    /// and attachments as they are there, under the local revision that follows; a change event
    /// for its watchers. Its neighbours stay where they are.
    /// An attachment whose bytes this replica does not hold is known by its hash and size, and
    /// its bytes fetched from the upstream when it is read (``PrefsEngine/attachmentData(_:of:)``).
    private func place(_ target: Draft?, id: UUID) throws {
        let local = try connection.draft(id)
        guard var draft = target else {
            guard let local else { return }
            try connection.deleteDraft(local)
            var deleted = local
            deleted.revision += 1
            try recordDraft(.draftDeleted, deleted, validity: .absent)
            return
        }
        // Bytes another device attached are fetched when the attachment is read, not now.
        for attachment in draft.attachments { try connection.noteBlob(sha256: attachment.sha256, byteSize: attachment.byteSize) }
        // A draft deleted here and back takes up its local revisions where they stopped.
        draft.revision = try local?.revision ?? connection.draftVersion(of: id, at: nil)?.revision ?? 0
        guard local.map({ !$0.hasContent(of: draft) }) ?? true else { return }
        draft.revision += 1
        guard let local else {
            try connection.insertDraft(draft)
            for attachment in draft.attachments { try connection.insertAttachment(attachment) }
            try recordDraft(.draftCreated, draft)
            return
        }
        try connection.updateDraft(draft)
        // Added before the others are removed: an attachment removed frees its bytes if nothing
        // else uses them, and one added may use the same bytes.
        for attachment in draft.attachments {
            if let was = local.attachments.first(where: { $0.id == attachment.id }) {
                if was != attachment { try connection.updateAttachment(attachment) }
            } else {
                try connection.insertAttachment(attachment)
            }
        }
        for attachment in local.attachments where !draft.attachments.contains(where: { $0.id == attachment.id }) {
            try connection.deleteAttachment(attachment)
        }
        try recordDraft(.draftUpdated, draft, previousThread: local.thread != draft.thread ? local.thread : nil)
    }
}
