/// The seqs a transaction gives the tasks it adds on SQLite (TaskSchema steps
/// 8 to 10): each above every stored seq and above the counted mark. Read
/// once per transaction, under the store's write lock that it holds, and
/// counted up from there: an add needs its seq before its insert (a new
/// task's id carries it, `TaskID`), and knows from them without a further
/// read how many tasks lie above the mark (`TaskSchema.addPending`). The
/// same statement looks whether a run other than the adder's watches the
/// tasks' topic (`StoreTransaction.recordChange(topic:key:watchedByOtherThan:)`):
/// a statement costs an add more than the rows it reads.
struct TaskSeqs {
    /// The seq of the next task stored.
    private(set) var next: Int64
    /// The counted mark (TaskSchema step 9).
    private(set) var mark: Int64
    /// Whether a run other than the one given watches the tasks' topic.
    let watched: Bool

    /// The store is untrusted: a counted mark missing, not an integer or out
    /// of range, or a seq stored so large that no task fits above it, is
    /// refused as corrupt before anything is stored.
    init(watchedByOtherThan run: String, in transaction: StoreTransaction) throws {
        var newest: Int64?, mark: Int64?, watched = false
        do {
            try transaction.query(TaskSeqs.read, [.text(TaskSchema.topic), .text(run)]) { row in
                newest = row.isNull(0) ? nil : row.integer(0)
                mark = row.isNull(1) ? nil : row.integer(1)
                watched = row.integer(2) != 0
            }
        } catch {
            try TaskSchema.verifyCountedMark(in: transaction)
            throw error
        }
        guard let mark, mark >= 0, mark < Int64.max / 2 else {
            try TaskSchema.verifyCountedMark(in: transaction)
            throw OutliveError.corrupt("the store is damaged: the tasks' counted mark is out of range")
        }
        let above = max(newest ?? 0, mark)
        guard above < Int64.max - Int64(TaskQueue.maxBatch) else {
            throw OutliveError.corrupt("the store is damaged: a task's seq \(above) leaves no room for new tasks")
        }
        next = above + 1
        self.mark = mark
        self.watched = watched
    }

    private static let read = """
        SELECT (SELECT max(seq) FROM outlive_tasks), (SELECT seq FROM outlive_task_counted WHERE slot = 0),
               EXISTS (SELECT 1 FROM outlive_watchers WHERE topic = ? AND run_id <> ?)
        """

    /// The task of seq `next` was stored.
    mutating func taken() { next += 1 }

    /// The tasks above the mark were folded into the counters: the mark is the newest seq.
    mutating func folded() { mark = next - 1 }

    /// How many tasks lie above the counted mark, those taken included.
    var uncounted: Int64 { next - 1 - mark }
}
