/// The statements that claim, and end, a run's batch of tasks in one
/// statement each instead of one per task: a statement's own cost (its
/// setup, its statement journal, the call into the engine) is paid once per
/// batch, the work per row (the row, its index entries, the counts'
/// triggers) stays. Each row keeps its own claim token, bound beside its seq
/// (`CASE seq WHEN ? THEN ? …`), so that every attempt is fenced as before.
///
/// A batch is sent in chunks of a power of two up to `largestChunk` rows, so
/// that a connection prepares a handful of statements whatever the batch
/// sizes (a statement per size up to the largest batch would keep up to a
/// thousand large ones prepared).
enum TaskBatchSQL {
    static let largestChunk = 32

    /// The chunk sizes that make up `count` rows, largest first.
    static func chunks(_ count: Int) -> [Int] {
        var sizes: [Int] = []
        var left = count
        while left > 0 {
            var size = largestChunk
            while size > left { size /= 2 }
            sizes.append(size)
            left -= size
        }
        return sizes
    }

    /// Claims `size` ready rows for a run: binds the run's id, then each row's
    /// seq and token, then the seqs again. Only rows that are ready and name
    /// no runner change: the caller read them so in this transaction (and on
    /// PostgreSQL holds their locks), so all of them do.
    static func claim(_ size: Int) -> String { claims[index(size)] }

    /// Ends `size` attempts that succeeded and that nothing else waits on, as
    /// `TaskQueue.finish`'s single delete did for one: binds the seqs, the
    /// run's id, each row's seq and token, each row's seq and attempt number.
    /// A row it does not match (cancelled, holding an outcome, posting a
    /// result, starting a group, another attempt's) is left for `finish`.
    /// Nothing is read back (RETURNING made SQLite's delete of one task cost
    /// half as much again): a chunk it did not delete whole goes to `finish`.
    static func deleteSucceeded(_ size: Int) -> String { deletes[index(size)] }

    private static func index(_ size: Int) -> Int {
        precondition(size >= 1 && size <= largestChunk && size & (size - 1) == 0, "a chunk is a power of two up to \(largestChunk)")
        return size.trailingZeroBitCount
    }

    private static let sizes = Array((0...largestChunk.trailingZeroBitCount).map { 1 << $0 })

    private static func list(_ size: Int) -> String { Array(repeating: "?", count: size).joined(separator: ", ") }
    private static func cases(_ size: Int) -> String { String(repeating: " WHEN ? THEN ?", count: size) }

    private static let claims = sizes.map { size in
        """
        UPDATE outlive_tasks SET runner = ?, state = \(TaskSchema.State.running.rawValue), outcome = NULL, attempts = attempts + 1,
            claim = CASE seq\(cases(size)) END
        WHERE seq IN (\(list(size))) AND runner IS NULL AND state = \(TaskSchema.State.ready.rawValue)
        """
    }

    private static let deletes = sizes.map { size in
        """
        DELETE FROM outlive_tasks WHERE seq IN (\(list(size))) AND runner = ?
            AND claim = CASE seq\(cases(size)) END AND attempts = CASE seq\(cases(size)) END
            AND state = \(TaskSchema.State.running.rawValue) AND outcome IS NULL AND cancelled = 0
            AND result_signal IS NULL AND group_start IS NULL
        """
    }
}
