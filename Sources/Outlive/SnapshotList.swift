import COutliveAPI
import OutliveCore

// The one listing model of the C API: outlive_<noun>_list_new takes a snapshot,
// _count and the accessors read it by index, _free releases it. Every list is a
// SnapshotList of the core's entries; strings are copied to C once, when first
// read, and belong to the list.

final class SnapshotList<Entry> {
    let entries: [Entry]
    /// C copies handed out, by "index/field". A list is read by one thread at a time.
    private var texts: [String: UnsafeMutablePointer<CChar>] = [:]

    init(_ entries: [Entry]) { self.entries = entries }

    deinit { for text in texts.values { text.deallocate() } }

    func entry(_ index: Int) -> Entry? {
        index >= 0 && index < entries.count ? entries[index] : nil
    }

    /// A string field of entry `index` as C text owned by the list; NULL out of range or when absent.
    func text(_ index: Int, _ field: String, _ value: (Entry) -> String?) -> UnsafePointer<CChar>? {
        guard let entry = entry(index), let string = value(entry) else { return nil }
        let key = "\(index)/\(field)"
        if let kept = texts[key] { return UnsafePointer(kept) }
        let utf8 = Array(string.utf8)
        let copy = UnsafeMutablePointer<CChar>.allocate(capacity: utf8.count + 1)
        for (offset, byte) in utf8.enumerated() { copy[offset] = CChar(bitPattern: byte) }
        copy[utf8.count] = 0
        texts[key] = copy
        return UnsafePointer(copy)
    }
}

/// The list behind a handle, or nil for NULL and handles of another kind.
func snapshot<Entry>(_ list: OpaquePointer?, of type: Entry.Type) -> SnapshotList<Entry>? {
    borrowIfPresent(list, SnapshotList<Entry>.self)
}

/// A C `limit` as a count: 0 (and a size_t past Int.max) is no limit.
func listLimit(_ limit: Int) -> Int {
    limit <= 0 ? Int.max : limit
}

/// Up to `limit` entries (0: all) after `after`, read from a core list that
/// returns at most `page` a call: pages follow each other by the last
/// entry's `key`, so a list of any length is read in bounded calls.
func readPaged<Entry>(after: String?, limit: Int, page: Int, key: (Entry) -> String,
                      _ read: (_ after: String?, _ limit: Int) throws -> [Entry]) rethrows -> [Entry] {
    let wanted = listLimit(limit)
    var cursor = after
    var entries: [Entry] = []
    while entries.count < wanted {
        let chunk = try read(cursor, min(wanted - entries.count, page))
        entries += chunk
        guard chunk.count == page, let last = chunk.last else { break }
        cursor = key(last)
    }
    return entries
}

/// One page of a list the core reads whole, in its order: the entries after the
/// one whose id is `after` (nil: from the first), at most `limit`.
/// `.notFound` when `after` is no longer in the list (restart from the first).
func page<Entry>(_ entries: [Entry], after: String?, limit: Int, id: (Entry) -> String, what: String) throws -> [Entry] {
    var start = 0
    if let after {
        guard let found = entries.firstIndex(where: { id($0) == after.lowercased() || id($0) == after }) else {
            throw OutliveError.notFound("no \(what) \(after) to list after (it may be gone: start from the first)")
        }
        start = found + 1
    }
    return Array(entries[start...].prefix(listLimit(limit)))
}
