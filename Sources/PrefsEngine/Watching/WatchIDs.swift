/// The watches one index entry of the hub names (one key, prefix, draft, thread or account).
///
/// Most entries name a single watch — an app watches each key once — and need no set: for
/// 10 000 watched keys that is 10 000 allocations fewer.
enum WatchIDs: Sendable {
    case one(Int)
    case many(Set<Int>)

    /// Adds `id` to the entry at `name`, creating it.
    static func insert(_ id: Int, into index: inout [String: WatchIDs], at name: String) {
        switch index[name] {
        case nil: index[name] = .one(id)
        case .one(let other): index[name] = .many([other, id])
        case .many(var ids):
            index[name] = nil  // so that the set is uniquely referenced, not copied
            ids.insert(id)
            index[name] = .many(ids)
        }
    }

    /// Removes `id` from the entry at `name`, dropping the entry when it names no watch.
    static func remove(_ id: Int, from index: inout [String: WatchIDs], at name: String?) {
        guard let name, let entry = index[name] else { return }
        switch entry {
        case .one(let other):
            if other == id { index[name] = nil }
        case .many(var ids):
            index[name] = nil
            ids.remove(id)
            if ids.count == 1, let last = ids.first {
                index[name] = .one(last)
            } else if !ids.isEmpty {
                index[name] = .many(ids)
            }
        }
    }

    /// Adds these ids to `ids`.
    func add(to ids: inout Set<Int>) {
        switch self {
        case .one(let id): ids.insert(id)
        case .many(let many): ids.formUnion(many)
        }
    }
}
