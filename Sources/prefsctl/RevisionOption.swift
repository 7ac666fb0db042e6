import ArgumentParser

/// `--if-revision N`: a draft change that goes through only if the draft is still at revision N
/// (HTTP `If-Match`); else exit 4, changing nothing.
struct RevisionOption: ParsableArguments {
    @Option(help: "Only if the draft is still at this revision (else exit 4, changing nothing).")
    var ifRevision: Int64?
}
