/// Follows a watch for as long as the calling task runs, resuming where it left off, so that what
/// follows it — a ``PreferenceMirror``, a draft or thread wrapper — stays current through
/// anything short of its own end:
///
/// - after an `overflow`, it resumes at once from the overflow's revision;
/// - after the service went away (a `shutdown` event, a daemon that cannot be reached), it
///   retries from the last revision it saw, pausing 0.1 s, then twice as long each time up to
///   5 s — so it picks up again, missing nothing, once a restarted daemon answers;
/// - if the change log no longer reaches back to that revision (`compacted`), or the service has
///   not reached it (a daemon restarted on another database), it calls `resynchronize` to load
///   the whole state again, and follows from the revision that returns — as it does first of all
///   when `revision` is nil.
///
/// `onChange` gets every change (never a notice) in order; `onInterruption` gets the reason each
/// time following stops, and `nil` once events flow again.
func followChanges(
    of service: any PrefsService, _ request: WatchRequest, from revision: Revision?,
    resynchronize: @Sendable () async throws -> Revision,
    onInterruption: @Sendable (PrefsError?) -> Void,
    onChange: @Sendable (ChangeEvent) async throws -> Void
) async {
    var since: Revision? = revision
    var pause = Duration.milliseconds(100)
    var interrupted = false
    while !Task.isCancelled {
        // Why this round of following ended; nil: resume at once.
        var end: PrefsError?
        do {
            if since == nil { since = try await resynchronize() }
            var request = request
            request.since = since
            end = PrefsError(.unavailable, "The watch ended.")
            events: for try await event in service.watch(request) {
                if interrupted {
                    interrupted = false
                    pause = .milliseconds(100)
                    onInterruption(nil)
                }
                switch event.kind {
                case .overflow:
                    since = event.revision
                    end = nil
                    break events
                case .shutdown:
                    end = PrefsError(.unavailable, "The service shut down at revision \(event.revision).")
                    break events
                case .progress:
                    since = max(since ?? event.revision, event.revision)
                default:
                    try await onChange(event)
                    since = event.revision
                }
            }
        } catch let error as PrefsError where error.code == .compacted || error.newestRevision != nil {
            since = nil
        } catch is CancellationError {
            return
        } catch {
            end = error as? PrefsError ?? PrefsError(.unavailable, "\(error)")
        }
        guard let end else { continue }
        guard !Task.isCancelled else { return }
        interrupted = true
        onInterruption(end)
        do {
            try await Task.sleep(for: pause)
        } catch {
            return
        }
        pause = min(pause * 2, .seconds(5))
    }
}
