/// What a post on SQLite reads before its insert (messages schema steps 3
/// and 4): the newest stored seq and the counted mark (the new message's seq
/// is above both, and its id carries it: `SeqID`), its category's counter
/// (for the cap, `MessageCounts.beforePost`), and whether a run other than
/// the poster's watches messages (else no feed entry is written). One
/// statement, and none at all for a post that follows this handle's last one
/// with nothing committed in between, by any connection: the data version is
/// the one that post committed with (`MessageQueue.keptSeqs`), and what it
/// read is then still true but for what it wrote itself, which is counted in.
struct MessageSeqs {
    /// The newest stored seq (0: none).
    private(set) var newest: Int64
    /// The counted mark (`outlive_message_counted`), checked.
    private(set) var mark: Int64
    /// The category whose counter is known, and that counter.
    private(set) var category: String?
    private(set) var counted: Int64
    /// Whether a live run other than the poster's watches messages.
    let watched: Bool

    /// Read in one statement. The store is untrusted: a missing or
    /// out-of-range mark fails the post as corrupt.
    init(category: String, watchedByOtherThan run: String, in transaction: StoreTransaction) throws {
        var found: (mark: Int64, newest: Int64, counted: Int64, watched: Bool)?
        try transaction.query(MessageSeqs.read, [.text(category), .text(MessageQueue.topic), .text(run)]) {
            found = ($0.integer(0), $0.integer(1), $0.integer(2), $0.integer(3) != 0)
        }
        guard let found else { throw MessageCounts.missingMark() }
        mark = try MessageCounts.checked(found.mark)
        newest = found.newest
        self.category = category
        counted = found.counted
        watched = found.watched
    }

    private static let read = """
        SELECT m.seq, coalesce((SELECT max(seq) FROM outlive_messages), 0),
            coalesce((SELECT count FROM outlive_message_categories WHERE category = ?1), 0),
            EXISTS (SELECT 1 FROM outlive_watchers WHERE topic = ?2 AND run_id <> ?3)
        FROM outlive_message_counted m WHERE m.slot = 0
        """

    /// The counter of `category`, when it is the one known.
    func counted(of category: String) -> Int64? {
        self.category == category ? counted : nil
    }

    /// A message of seq `seq` was inserted.
    mutating func posted(_ seq: Int64) { newest = max(newest, seq) }

    /// The messages above the mark were folded into the counters: the mark
    /// is the newest seq, and the counter known is no longer.
    mutating func folded() {
        mark = newest
        category = nil
    }
}
