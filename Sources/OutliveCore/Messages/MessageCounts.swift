/// How many messages each category holds: the cap a post checks, and the
/// counts. `outlive_message_categories` keeps a count per category.
///
/// On PostgreSQL every post (its admission, `MessageTable.admission`) and
/// every deletion updates it. On SQLite (since
/// step 3 of the messages schema) a post writes no counter — its row was one
/// of the pages a post's commit wrote, and at synchronous=NORMAL a post
/// costs the pages it writes. Messages above the counted mark
/// (`outlive_message_counted.seq`) are not in the counters: a count adds them
/// up from their rows (the tail: the newest rows, at most `foldAfter` of
/// them; a post only when its category may be full), and a post that finds
/// the tail that long first folds it into the
/// counters and moves the mark to the newest message. A new message's seq is
/// above every stored seq and above the mark, so a message at or below the
/// mark is always a counted one, and a deletion counts it out only then.
///
/// The mark is untrusted input like every stored value: missing, not an
/// integer, negative or the largest integer, it fails the call as corrupt.
enum MessageCounts {
    /// The most uncounted messages a post leaves behind it (a fold, about
    /// two pages, every this many posts).
    static let foldAfter: Int64 = 32

    /// The words of a post refused because its category is full: SQLite's
    /// post throws them, PostgreSQL's admission raises them (`%` for each
    /// value in its RAISE), one text for both engines.
    static func fullCategory(_ category: String, holds count: String) -> String {
        "category \"\(category)\" holds \(count) messages, its limit; remove messages or raise the limit (outlive_messages_set_category_limit)"
    }

    /// Before a post into `category` on SQLite (PostgreSQL's insert admits
    /// its message itself: `MessageTable.admission`): the seq the new message
    /// takes, and how many messages the category holds when that is `limit`
    /// or more (the post is refused), else nil. The tail is folded first
    /// when it is `foldAfter` long, and counted only when the category may
    /// be full: its counter plus every message above the mark is below the
    /// limit on nearly every post. `seqs`: those this handle's last post left
    /// when nothing was committed since (see MessageSeqs), else nil and read
    /// here; they leave with this post's seq (and fold) counted in.
    static func beforePost(category: String, limit: Int64, seqs: inout MessageSeqs?, watchedByOtherThan run: String,
                           in transaction: StoreTransaction) throws -> (held: Int64?, sequence: Int64) {
        var known: MessageSeqs
        if let kept = seqs, kept.counted(of: category) != nil {
            known = kept
        } else {
            known = try MessageSeqs(category: category, watchedByOtherThan: run, in: transaction)
        }
        let mark = known.mark, newest = known.newest, counted = known.counted(of: category) ?? 0
        let sequence = try after(newest, mark: mark)
        // Above the mark: at most `newest - mark` messages (no overflow: 0 <= mark < newest).
        let above = newest > mark ? newest - mark : 0
        var held: Int64?
        if counted >= limit - above {
            let tail = try transaction.integer("SELECT count(*) FROM outlive_messages WHERE category = ? AND seq > ?",
                                               [.text(category), .integer(mark)]) ?? 0
            let count = try sum(counted, tail)
            if count >= limit { held = count }
        }
        if above >= foldAfter {
            try fold(after: mark, upTo: newest, in: transaction)
            known.folded()
        }
        known.posted(sequence)
        seqs = known
        return (held, sequence)
    }

    /// Deletes a message and counts it out of its category. False when it was gone.
    static func delete(_ id: String, in transaction: StoreTransaction) throws -> Bool {
        var found: (category: String, counted: Bool)?
        let byID = MessageTable.row(id, transaction.engine)
        switch transaction.engine {
        case .postgresql:
            try transaction.query("SELECT category FROM outlive_messages WHERE \(byID.condition)", byID.arguments) {
                found = ($0.text(0) ?? "", true)
            }
        case .sqlite:
            var mark: Int64 = 0
            var missing = false
            try transaction.query("""
                SELECT o.category, o.seq, m.seq IS NULL, m.seq
                    FROM (SELECT category, seq FROM outlive_messages WHERE \(byID.condition)) o
                    LEFT JOIN outlive_message_counted m ON m.slot = 0
                """, byID.arguments) { row in
                missing = row.integer(2) != 0
                if !missing { mark = row.integer(3) }
                found = (row.text(0) ?? "", row.integer(1) <= mark)
            }
            if found != nil {
                if missing { throw missingMark() }
                _ = try checked(mark)
            }
        }
        guard let found else { return false }
        try transaction.execute("DELETE FROM outlive_messages WHERE \(byID.condition)", byID.arguments)
        if found.counted {
            try transaction.execute("UPDATE outlive_message_categories SET count = count - 1 WHERE category = ?", [.text(found.category)])
            try transaction.execute("DELETE FROM outlive_message_categories WHERE category = ? AND count <= 0", [.text(found.category)])
        }
        return true
    }

    /// Stored messages, of one category or all.
    static func count(category: String?, in transaction: StoreTransaction) throws -> Int64 {
        let arguments: [SQLValue] = category.map { [.text($0)] } ?? []
        switch transaction.engine {
        case .postgresql:
            let sql = category == nil ? "SELECT sum(count) FROM outlive_message_categories"
                : "SELECT count FROM outlive_message_categories WHERE category = ?"
            return try transaction.integer(sql, arguments) ?? 0
        case .sqlite:
            let sql = category == nil
                ? """
                  SELECT m.seq, coalesce((SELECT sum(count) FROM outlive_message_categories), 0),
                      (SELECT count(*) FROM outlive_messages WHERE seq > m.seq)
                  FROM outlive_message_counted m WHERE m.slot = 0
                  """
                : """
                  SELECT m.seq, coalesce((SELECT count FROM outlive_message_categories WHERE category = ?1), 0),
                      (SELECT count(*) FROM outlive_messages WHERE category = ?1 AND seq > m.seq)
                  FROM outlive_message_counted m WHERE m.slot = 0
                  """
            var found: (mark: Int64, counted: Int64, tail: Int64)?
            try transaction.query(sql, arguments) { found = ($0.integer(0), $0.integer(1), $0.integer(2)) }
            guard let found else { throw missingMark() }
            _ = try checked(found.mark)
            return try sum(found.counted, found.tail)
        }
    }

    /// Counts the messages in (mark, newest] into their categories' counters
    /// and moves the mark to `newest`.
    private static func fold(after mark: Int64, upTo newest: Int64, in transaction: StoreTransaction) throws {
        // Counted here rather than by GROUP BY, whose sorter took about 2.9k
        // instructions a row (a record allocated for each), a tenth of a
        // post's; the rows of a tail are nearly always of one or a few
        // categories, each run of one counted by a comparison.
        var counts: [(category: String, count: Int64)] = []
        try transaction.query("SELECT category FROM outlive_messages WHERE seq > ? AND seq <= ?", [.integer(mark), .integer(newest)]) { row in
            guard let category = row.text(0) else {
                throw OutliveError.corrupt("the store is damaged: a message above the counted mark has no category")
            }
            if let last = counts.indices.last, counts[last].category == category {
                counts[last].count += 1
            } else if let index = counts.firstIndex(where: { $0.category == category }) {
                counts[index].count += 1
            } else {
                counts.append((category, 1))
            }
        }
        // OR ROLLBACK: no statement journal (see `Signals.post`); a failure
        // rolls the post back anyway.
        for (category, count) in counts {
            try transaction.execute("""
                INSERT OR ROLLBACK INTO outlive_message_categories(category, count) VALUES (?, ?)
                    ON CONFLICT(category) DO UPDATE SET count = outlive_message_categories.count + excluded.count
                """, [.text(category), .integer(count)])
        }
        try transaction.execute("UPDATE OR ROLLBACK outlive_message_counted SET seq = ? WHERE slot = 0", [.integer(newest)])
    }

    /// The seq after the newest message and the mark.
    private static func after(_ newest: Int64, mark: Int64) throws -> Int64 {
        // The database is untrusted input: a crafted largest order must not trap.
        guard newest < Int64.max else { throw OutliveError.corrupt("the store is damaged: a message has the largest possible order number") }
        return max(newest, mark) + 1
    }

    static func checked(_ mark: Int64) throws -> Int64 {
        guard mark >= 0 && mark < Int64.max else {
            throw OutliveError.corrupt("the store is damaged: the counted mark of messages (outlive_message_counted) is \(mark)")
        }
        return mark
    }

    private static func sum(_ counted: Int64, _ tail: Int64) throws -> Int64 {
        let (total, overflow) = counted.addingReportingOverflow(tail)
        guard !overflow else { throw OutliveError.corrupt("the store is damaged: a category's message count is \(counted)") }
        return total
    }

    static func missingMark() -> OutliveError {
        OutliveError.corrupt("the store is damaged: the counted mark of messages (outlive_message_counted) is missing")
    }
}
