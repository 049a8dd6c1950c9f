/// The topics that no run other than this handle's watched when this SQLite
/// handle last committed, kept with the data version that commit left.
///
/// A change of a topic writes a feed entry only when another run watches it,
/// and finding out is a statement of its own (`KeptStatement.feedEntryForOthers`:
/// about 3k instructions, a tenth of a kv set at NORMAL, when it writes
/// nothing). While the data version at the start of a write is still the one
/// this handle's last commit left, nothing was committed since by any
/// connection, so the watchers are as they were and the look is not needed.
///
/// Only absences are kept, and only from looks made in a transaction: this
/// handle's own transactions add watchers of its own run only (which the look
/// leaves out) and remove those of ended runs, so no transaction of the handle
/// can make a kept absence false. Any other connection's commit changes the
/// data version, and the next write looks again. The tasks' and messages'
/// seqs keep their own answer the same way (TaskSeqs, MessageSeqs).
struct UnwatchedTopics {
    /// The data version the topics were known at; nil: nothing is known.
    private(set) var version: UInt64?
    private var topics: [String] = []
    /// Whether `isUnwatched` compared `version` with the transaction's yet.
    private var checked = false
    /// A transaction relied on or added to the topics: its commit keeps them.
    private(set) var used = false

    /// Whether no run other than this handle's watches `topic`, as known at
    /// `dataVersion` (read once per transaction, when first needed).
    mutating func isUnwatched(_ topic: String, dataVersion: () -> UInt64?) -> Bool {
        if !checked {
            checked = true
            if version == nil || version != dataVersion() { topics = [] }
        }
        guard topics.contains(topic) else { return false }
        used = true
        return true
    }

    /// A look in this transaction found no other run watching `topic`
    /// (after `isUnwatched` for it).
    mutating func learn(_ topic: String) {
        topics.append(topic)
        used = true
    }

    /// What a committed transaction leaves for the next: its topics at the
    /// data version its commit left.
    func committed(at dataVersion: UInt64?) -> UnwatchedTopics {
        var next = UnwatchedTopics()
        next.version = dataVersion
        next.topics = dataVersion == nil ? [] : topics
        return next
    }
}
