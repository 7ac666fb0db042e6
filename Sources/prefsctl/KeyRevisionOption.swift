import ArgumentParser

/// `--if-revision N`: a preference change (set, reset, lock, unlock) that goes through only if
/// the key's revision at the scope is still N (HTTP `If-Match`); else exit 4, changing nothing.
struct KeyRevisionOption: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Only if the key's revision at the scope is still this (else exit 4, changing nothing).",
            discussion: "The revision of the change that last set or locked the key at the scope, as a write answers it; "
                + "0: only if nothing is set or locked there."))
    var ifRevision: Int64?

    func validate() throws {
        if let ifRevision, ifRevision < 0 {
            throw ValidationError("--if-revision takes a revision, a whole number ≥ 0, not \(ifRevision).")
        }
    }
}
