/// The part of an open store that differs between engines: what keeps this
/// handle's run alive for other processes to see, how it sees theirs end, and
/// the one fd that wakes it (a commit by another process, a run that ended).
///
/// SQLite (`SQLiteRunLiveness`): a lock file per run in runs/ and an inotify
/// fd, so every death is announced. PostgreSQL (`PostgreSQLRunLiveness`): a
/// session advisory lock held by an idle connection that also LISTENs; no
/// event announces another host's death, hence `checkInterval`.
protocol RunLiveness: AnyObject {
    /// The fd the store's loop watches.
    var fd: Int32 { get }
    /// Seconds between checks for runs that ended unannounced; nil when every
    /// end raises an event on `fd`.
    var checkInterval: Double? { get }
    /// A second fd the loop watches, readable after a commit of this handle
    /// whose changes only this handle's run watches (nil: `fd` covers them).
    var ownChangesFD: Int32? { get }
    /// Resets `ownChangesFD` before the feed is read.
    func drainOwnChanges()
    /// Reads what made `fd` readable, without blocking.
    func readEvents() -> LivenessEvents
    /// Which of `runs` (other runs' ids, as stored) are alive now. May be
    /// called inside a transaction of the store's backend.
    func alive(_ runs: [String]) -> Set<String>
    /// Called after this handle removed the ended `run` from the database.
    func forget(run: String)
    /// Ends this run's liveness (close). Not in a forked child.
    func release()
}

struct LivenessEvents {
    /// Runs that may have ended: nil when any may have, empty when none.
    var endedCandidates: [String]? = []
    /// This handle's own run has ended: its liveness is gone.
    var ownRunLost = false
}
