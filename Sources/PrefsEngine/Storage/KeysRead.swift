/// The preference keys a batch read (and so wrote): what another writer must not have changed
/// for the batch to be committed after it.
package enum KeysRead: Sendable, Equatable {
    /// Every key (a dump, a load, a recursive reset).
    case all
    /// These keys.
    case some(Set<String>)
}
